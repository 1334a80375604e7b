/**
 * One execution per event for the graphql-ws subscriptions that ask the same thing of the same event.
 *
 * 10,000 sockets watching one account's usage are woken by one message with one generation (`FanOut`), and
 * already share one read of the usage (`SingleFlight`); what was left per socket was running the selection
 * set over that same report. A subscription field whose answer to an event depends on nothing but the
 * principal, the operation and the event opts in with `extensions: { sharedEvents: true }` (its events are
 * `FanOut` generations: a number names one state, and a later change has a higher one). Subscriptions of
 * such a field with the same sharing key (`sharingKey`) then run one execution per event, while it runs,
 * and every one of them gets its result object.
 *
 * The key holds everything the context carries that could make two answers differ — the whole principal
 * (account, role, payer, credential) and the locale — besides the document, operation name and variables.
 * What it leaves out — the request id, the client address and user agent — no opted-in field reads; the
 * request id errors carry is added per socket after the result is shared (`resultWithRequestId` in ws.ts),
 * and masking (yoga's `onSubscribeResult`) runs per socket on the shared result and never changes it. A
 * shared result without errors is also serialised once: every socket is sent the same `next` frame bytes
 * (`sharedFrame`), only the subscription id in them being the socket's own.
 */
import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Principal } from '../authz/principal.ts';
import { SingleFlight } from '../infra/single-flight.ts';
import { isAsyncIterable, mapIterator } from './async-iterators.ts';

/** The build yoga and Pothos use (see `errors.ts` on graphql's two builds): its executor knows their schema. */
const graphql = createRequire(import.meta.url)('graphql') as typeof GraphQL;

/** Sharing keys of the operations that may share, by their context object (set by ws.ts before subscribing). */
const keys = new WeakMap<object, string>();
/** The executions running now, by sharing key and event; forgotten once settled, as reads are. */
const running = new SingleFlight<GraphQL.ExecutionResult>();

/**
 * The key under which the operation shares its events' executions, or null when it may not share: it is
 * not a subscription of one opted-in field selected plainly (a fragment or a directive at the root is left
 * unshared rather than reasoned about), or nobody is signed in. Principals or variables that serialise
 * differently but mean the same only share less, never wrongly.
 */
export function sharingKey(
  schema: GraphQL.GraphQLSchema,
  document: GraphQL.DocumentNode,
  operation: { query: string; operationName?: string | null; variables?: Record<string, unknown> | null },
  principal: Principal | null,
  locale: string | undefined,
): string | null {
  if (!principal) return null;
  const definition = graphql.getOperationAST(document, operation.operationName);
  if (definition?.operation !== 'subscription') return null;
  const [root, ...more] = definition.selectionSet.selections;
  if (!root || more.length > 0 || root.kind !== graphql.Kind.FIELD || root.directives?.length) return null;
  const field = schema.getSubscriptionType()?.getFields()[root.name.value];
  if (field?.extensions.sharedEvents !== true) return null;
  return JSON.stringify([operation.query, operation.operationName ?? null, operation.variables ?? null, principal, locale ?? null]);
}

/** Marks an operation's context as sharing under `key` (from `sharingKey`). */
export function shareEvents(contextValue: object, key: string): void {
  keys.set(contextValue, key);
}

/**
 * The yoga plugin: an operation marked by `shareEvents` subscribes with its own source stream (its own
 * wake-ups, its own end) and maps each event through the execution shared under its key and that event.
 */
export const useSharedEvents: Plugin = {
  onSubscribe: ({ args, setSubscribeFn }) => {
    const key = keys.get(args.contextValue as object);
    if (key !== undefined) setSubscribeFn((subscribeArgs) => subscribeShared(subscribeArgs as GraphQL.ExecutionArgs, key));
  },
};

async function subscribeShared(args: GraphQL.ExecutionArgs, key: string): Promise<GraphQL.ExecutionResult | AsyncIterableIterator<GraphQL.ExecutionResult>> {
  const stream = await graphql.createSourceEventStream(args);
  if (!isAsyncIterable(stream)) return stream as GraphQL.ExecutionResult;
  return mapIterator(stream as AsyncIterable<unknown>, (event) =>
    running.run(key, typeof event === 'number' ? event : undefined, async () => {
      const result = await graphql.execute({ ...args, rootValue: event });
      // Without errors the result goes out as it is to every socket (nothing per socket is added to it).
      if (!result.errors?.length) frames.set(result, { payload: JSON.stringify(result), byId: new Map() });
      return result;
    }),
  );
}

/** The serialised payload of each shared result without errors, and its `next` frames by subscription id. */
const frames = new WeakMap<GraphQL.ExecutionResult, { payload: string; byId: Map<string, Buffer> }>();

/**
 * The graphql-ws `next` frame that sends `result` to subscription `id`, serialised once for every socket
 * (the ids clients choose are mostly the same few), or null when the result was not shared or has errors.
 */
export function sharedFrame(result: GraphQL.ExecutionResult, id: string): Buffer | null {
  const shared = frames.get(result);
  if (!shared) return null;
  let frame = shared.byId.get(id);
  if (!frame) shared.byId.set(id, (frame = Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":${shared.payload}}`)));
  return frame;
}


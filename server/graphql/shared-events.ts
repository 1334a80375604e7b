/**
 * One execution per event, and one stream writing its frame straight to each socket, for the graphql-ws
 * subscriptions that ask the same thing of the same events.
 *
 * 10,000 sockets watching one account's usage are woken by one message with one generation (`FanOut`). A
 * subscription field whose answer to an event depends on nothing but the principal, the operation and the
 * event opts in with `extensions: { sharedEvents: true }` (its events are `FanOut` generations: a number
 * names one state, and a later change has a higher one). Subscriptions of such a field with the same sharing
 * key (`sharingKey`) on one WebSocket server then form one `SharedStream`: one source stream (one watcher),
 * one execution per event, one serialised result, and its `next` frame written by the stream to each
 * subscriber's socket. graphql-ws and yoga still open and close each subscription (authorisation, limits,
 * `complete`); what they no longer run is a result stream per subscription and per event, which was most of
 * what 10,000 subscribers of one account cost after their execution was shared.
 *
 * The key holds everything the context carries that could make two answers differ — the whole principal
 * (account, role, payer, credential) and the locale — besides the document, operation name and variables.
 * What it leaves out — the request id, the client address and user agent — no opted-in field reads. A
 * result with errors is masked once (as yoga's masking would) and sent to each subscriber with its own
 * request id in them.
 *
 * Order and backpressure per subscriber are graphql-ws's: its frames go out in the order of the events, and
 * the next one is written only once the one before has left for the socket; meanwhile only the newest is
 * kept (a later state supersedes an earlier one), so a slow socket holds at most two frames and never the
 * other subscribers.
 */
import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { WebSocket } from 'ws';
import type { Principal } from '../authz/principal.ts';
import { SingleFlight } from '../infra/single-flight.ts';
import { isAsyncIterable } from './async-iterators.ts';
import { errorsWithRequestId, maskError } from './errors.ts';

/** The build yoga and Pothos use (see `errors.ts` on graphql's two builds): its executor knows their schema. */
const graphql = createRequire(import.meta.url)('graphql') as typeof GraphQL;

/** Frames a stream writes in one turn of the event loop: a write costs ~30 µs (mostly the kernel's), and 5,000 at once would hold the loop ~150 ms. */
const SLICE = 512;
const TEXT = { binary: false } as const;

/**
 * The key under which the operation shares its events, or null when it may not share: it is not a
 * subscription of one opted-in field selected plainly (a fragment or a directive at the root is left
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

/** A subscription that shares: its key (from `sharingKey`), and the socket, subscription id and request id its frames are for. */
export interface Share {
  streams: SharedStreams;
  key: string;
  socket: WebSocket;
  id: string;
  requestId: string;
}

/** The shares of the operations that may share, by their context object (set by ws.ts before subscribing). */
const shares = new WeakMap<object, Share>();

/** Marks an operation's context as sharing (`share.key` from `sharingKey`). */
export function shareEvents(contextValue: object, share: Share): void {
  shares.set(contextValue, share);
}

/**
 * The yoga plugin: an operation marked by `shareEvents` subscribes through its server's `SharedStreams`,
 * whose stream writes its frames; what graphql-ws gets back yields nothing and ends when the stream does.
 */
export const useSharedEvents: Plugin = {
  onSubscribe: ({ args, setSubscribeFn }) => {
    const share = shares.get(args.contextValue as object);
    if (share) setSubscribeFn((subscribeArgs) => share.streams.subscribe(subscribeArgs as GraphQL.ExecutionArgs, share));
  },
};

/** The shared streams of one WebSocket server, by sharing key. */
export class SharedStreams {
  readonly #streams = new Map<string, SharedStream>();

  /**
   * Subscribes through the field's own `subscribe` (its authorisation, its errors) and joins the key's
   * stream; the first subscriber's source becomes the stream's, later ones' are closed unstarted.
   */
  async subscribe(args: GraphQL.ExecutionArgs, share: Share): Promise<GraphQL.ExecutionResult | AsyncIterableIterator<GraphQL.ExecutionResult>> {
    const source = await graphql.createSourceEventStream(args);
    if (!isAsyncIterable(source)) return source as GraphQL.ExecutionResult;
    const iterator = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    let stream = this.#streams.get(share.key);
    if (stream) void iterator.return?.();
    else {
      const key = share.key;
      const created = new SharedStream(args, iterator, () => {
        if (this.#streams.get(key) === created) this.#streams.delete(key);
      });
      this.#streams.set(key, (stream = created));
    }
    return stream.join(share);
  }
}

/** One execution's `next` frames: the payload serialised once (null with errors: those are named per subscriber). */
interface Frames {
  generation: number;
  result: GraphQL.ExecutionResult;
  payload: string | null;
  byId: Map<string, Buffer>;
}

function frameFor(frames: Frames, subscriber: Subscriber): Buffer {
  const { id } = subscriber;
  if (frames.payload === null) {
    const result = { ...frames.result, errors: errorsWithRequestId(frames.result.errors ?? [], subscriber.requestId) };
    return Buffer.from(JSON.stringify({ id, type: 'next', payload: result }));
  }
  // The ids clients choose are mostly the same few: one frame for each.
  let frame = frames.byId.get(id);
  if (!frame) frames.byId.set(id, (frame = Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":${frames.payload}}`)));
  return frame;
}

/**
 * The subscribers of one sharing key: one source, one execution per event (in order; events that come
 * while one runs fold into the newest), each frame written to every subscriber. A subscriber that joins
 * once the stream has a state first gets that state executed for itself (shared with others joining at
 * the same generation, never with a later event's), then what the stream sent meanwhile, then the rest.
 */
class SharedStream {
  readonly #args: GraphQL.ExecutionArgs;
  readonly #source: AsyncIterator<unknown>;
  readonly #forget: () => void;
  readonly #subscribers = new Set<Subscriber>();
  readonly #executions = new SingleFlight<Frames>();
  /** The newest event the source gave (its generation numbers it among the others), and whether it is yet to be sent. */
  #latest: { generation: number; event: unknown } | undefined;
  #unsent = false;
  /** The frames of the newest event sent (or being sent) to the stream's subscribers. */
  #sent: Frames | undefined;
  #sending = false;
  #ended = false;

  constructor(args: GraphQL.ExecutionArgs, source: AsyncIterator<unknown>, forget: () => void) {
    this.#args = args;
    this.#source = source;
    this.#forget = forget;
    void this.#read();
  }

  join(share: Share): AsyncIterableIterator<GraphQL.ExecutionResult> {
    const subscriber = new Subscriber(share, (left) => this.#leave(left));
    this.#subscribers.add(subscriber);
    const from = this.#latest;
    // Before the first event, the first send reaches it.
    if (from === undefined) subscriber.live = true;
    else
      void this.#execute(from).then((frames) => {
        subscriber.send(frames);
        subscriber.live = true;
        if (this.#sent) subscriber.send(this.#sent);
      });
    return subscriber.results;
  }

  async #read(): Promise<void> {
    try {
      for (;;) {
        const step = await this.#source.next();
        if (step.done) break;
        // The field's events are generations (`sharedEvents`); anything else is a state of its own each time.
        const generation = typeof step.value === 'number' ? step.value : (this.#latest?.generation ?? 0) + 1;
        this.#latest = { generation, event: step.value };
        this.#unsent = true;
        void this.#send();
      }
    } catch {
      // A source that fails ends the stream: its subscribers complete.
    } finally {
      this.#end();
    }
  }

  /** Sends the newest event's frame to every live subscriber, one event at a time, in order. */
  async #send(): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#unsent && !this.#ended) {
        this.#unsent = false;
        const frames = await this.#execute(this.#latest!);
        this.#sent = frames;
        const subscribers = [...this.#subscribers];
        for (let i = 0; i < subscribers.length; i++) {
          if (i > 0 && i % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
          const subscriber = subscribers[i]!;
          if (subscriber.live) subscriber.send(frames);
        }
      }
    } finally {
      this.#sending = false;
    }
  }

  /** The execution for one event, shared while it runs; it never fails (an error is a result to send). */
  #execute({ generation, event }: { generation: number; event: unknown }): Promise<Frames> {
    return this.#executions.run('', generation, async () => {
      let result: GraphQL.ExecutionResult;
      try {
        result = await graphql.execute({ ...this.#args, rootValue: event });
        if (!result.errors?.length) return { generation, result, payload: JSON.stringify(result), byId: new Map() };
      } catch (error) {
        // Nobody awaits a stream's sends to hear of a failure: it goes to the subscribers, masked.
        result = { errors: [error as GraphQL.GraphQLError] };
      }
      // Masked as yoga masks a subscription's results (yoga.ts `maskedErrors`), once for every subscriber.
      return { generation, result: { ...result, errors: (result.errors ?? []).map((error) => maskError(error)) }, payload: null, byId: new Map() };
    });
  }

  #leave(subscriber: Subscriber): void {
    this.#subscribers.delete(subscriber);
    if (this.#subscribers.size === 0) this.#end();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#forget();
    void this.#source.return?.();
    for (const subscriber of this.#subscribers) subscriber.end();
    this.#subscribers.clear();
  }
}

/**
 * One subscription of a shared stream: its socket and id, and what graphql-ws iterates — a stream that
 * yields nothing (the frames go to the socket) and ends when the shared stream does, or when graphql-ws
 * returns it (the client completed the subscription or the socket closed).
 */
class Subscriber {
  readonly id: string;
  readonly requestId: string;
  /** Whether the stream's sends reach it (once its first state is on its way). */
  live = false;
  readonly results: AsyncIterableIterator<GraphQL.ExecutionResult>;
  readonly #socket: WebSocket;
  readonly #ended: Promise<IteratorResult<GraphQL.ExecutionResult>>;
  #resolveEnded!: (result: IteratorResult<GraphQL.ExecutionResult>) => void;
  #done = false;
  /** The newest event it was sent. */
  #generation = -Infinity;
  /** A frame is on its way to the socket; the newest frame to send after it. */
  #writing = false;
  #next: Buffer | null = null;

  constructor(share: Share, leave: (subscriber: Subscriber) => void) {
    this.id = share.id;
    this.requestId = share.requestId;
    this.#socket = share.socket;
    this.#ended = new Promise((resolve) => (this.#resolveEnded = resolve));
    const finish = () => {
      if (!this.#done) {
        this.end();
        leave(this);
      }
      return this.#ended;
    };
    this.results = {
      next: () => this.#ended,
      return: finish,
      throw: finish,
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /**
   * Writes the event's frame, or keeps it (in place of an older one) until the frame before it has left; an
   * event no newer than one it was sent is not sent again (a subscriber joining mid-send may be sent the
   * stream's newest event by both).
   */
  send(frames: Frames): void {
    if (this.#done || frames.generation <= this.#generation || this.#socket.readyState !== WebSocket.OPEN) return;
    this.#generation = frames.generation;
    const frame = frameFor(frames, this);
    if (this.#writing) {
      this.#next = frame;
      return;
    }
    this.#write(frame);
  }

  #write(frame: Buffer): void {
    if (this.#done || this.#socket.readyState !== WebSocket.OPEN) return;
    this.#writing = true;
    this.#socket.send(frame, TEXT, this.#written);
  }

  readonly #written = (error?: Error): void => {
    this.#writing = false;
    const next = this.#next;
    this.#next = null;
    if (next && !error) this.#write(next);
  };

  /** No more frames; graphql-ws's iteration ends (it sends `complete` unless the client asked for the end). */
  end(): void {
    this.#done = true;
    this.#next = null;
    this.#resolveEnded({ done: true, value: undefined });
  }
}

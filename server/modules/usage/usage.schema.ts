import { builder } from '../../graphql-core/builder.ts';
import { ModelClassEnum, MoneyRef } from '../model/model.schema.ts';
import { PoolWindowEnum } from '../plan/plan.schema.ts';
import type { CostBreakdownView, CostLineView } from './cost-breakdown.ts';
import type { UsageHistoryPage, UsageKey, UsageRecord } from './usage.history.ts';
import { HISTORY_DEFAULT_PAGE, HISTORY_MAX_PAGE } from './usage.history.ts';
import type { PoolReport, UsageReport } from './usage.service.ts';

const PoolUsageRef = builder.objectRef<PoolReport>('PoolUsage').implement({
  description: 'How much of one usage pool (class × window) is used, reservations of running requests included.',
  fields: (t) => ({
    class: t.expose('class', { type: ModelClassEnum, description: 'Model class of the pool.' }),
    window: t.expose('window', { type: PoolWindowEnum, description: 'Window the pool resets on.' }),
    used: t.expose('used', { type: MoneyRef, description: 'Used in the current window, at effective prices.' }),
    limit: t.expose('limit', { type: MoneyRef, description: 'Included per window by the plan package.' }),
    remaining: t.expose('remaining', { type: MoneyRef, description: 'limit − used, never below zero.' }),
    resetsAt: t.expose('resetsAt', { type: 'DateTime', description: 'When the current window ends and the pool resets.' }),
  }),
});

export const UsageRef = builder.objectRef<UsageReport>('Usage').implement({
  description: "The signed-in account's usage pools.",
  fields: (t) => ({
    planId: t.exposeString('planId', { description: 'free, pro or max.' }),
    packageId: t.exposeString('packageId', { description: 'Plan package, e.g. max_x5.' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 code of every amount.' }),
    timezone: t.exposeString('timezone', { description: 'Time zone the windows follow.' }),
    pools: t.expose('pools', { type: [PoolUsageRef], description: 'Every class × window: day, week and month for fast and premium.' }),
  }),
});

builder.queryField('usage', (t) =>
  t.field({
    type: UsageRef,
    authScopes: { signedIn: true },
    description: "The signed-in account's usage: used, limit and reset time for every class and window.",
    resolve: (_root, _args, { services, principal }) => services.usage.report(principal!.payer),
  }),
);

builder.subscriptionField('usageUpdated', (t) =>
  t.field({
    type: UsageRef,
    authScopes: { signedIn: true },
    description:
      "The signed-in account's usage, now and again whenever one of its requests is admitted or settled on any instance (changes within ~0.1 s arrive as one update).",
    subscribe: (_root, _args, { services, principal }) => services.usage.events.watch(principal!.payer.id),
    resolve: (generation, _args, { services, principal }) => services.usage.reportFor(principal!.payer, generation),
    // Its answer to a wake-up depends only on the principal and the generation: subscriptions asking the same share one execution (graphql/shared-events.ts).
    extensions: { sharedEvents: true },
  }),
);

export const UsageStatusEnum = builder.enumType('UsageStatus', {
  description: 'How a request ended, as the ledger recorded it.',
  values: {
    ok: { value: 'ok', description: 'Completed; billed for its tokens.' },
    refunded: { value: 'refunded', description: 'Ended before any output (the model server failed, or the client left before it was asked); nothing billed.' },
    client_disconnected: { value: 'client_disconnected', description: 'The client left mid-reply; billed for what was produced.' },
    upstream_failed: { value: 'upstream_failed', description: 'The model server failed mid-reply; billed for what was produced.' },
    abandoned: { value: 'abandoned', description: 'The serving instance stopped mid-reply; billed for what its last checkpoint recorded (estimated), or nothing.' },
  } as const,
});

const ProductEnum = builder.enumType('Product', {
  description: 'The metered product a ledger row is for.',
  values: {
    chat: { value: 'chat', description: 'Chat completions.' },
    search: { value: 'search', description: 'A web_search call (MCP, REST or svc-2.1-search).' },
    image: { value: 'image', description: 'Image generation (svc-img).' },
    speech: { value: 'speech', description: 'Text to speech (svc-tts).' },
    music: { value: 'music', description: 'Music (svc-music).' },
    embedding: { value: 'embedding', description: 'Embeddings (/v1/embeddings), billed by input tokens.' },
  } as const,
});

const MeterUnitEnum = builder.enumType('MeterUnit', {
  description: 'What a product produced besides tokens.',
  values: {
    image: { value: 'image', description: 'Images generated.' },
    audio_second: { value: 'audio_second', description: 'Seconds of audio.' },
    search: { value: 'search', description: 'Searches run.' },
  } as const,
});

const UsageKeyKindEnum = builder.enumType('UsageKeyKind', {
  description: 'Which kind of API key made a request.',
  values: {
    personal: { value: 'personal', description: 'A personal key (svc_live_…).' },
    enterprise: { value: 'enterprise', description: "An organisation's key (svc_ent_…)." },
  } as const,
});

export const UsageKeyRef = builder.objectRef<UsageKey>('UsageKey').implement({
  description: 'The API key that made a request, as lists show it: never the secret.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Key id.' }),
    kind: t.expose('kind', { type: UsageKeyKindEnum, description: 'Personal or organisation key.' }),
    name: t.exposeString('name', { description: 'The name given when it was created.' }),
    prefix: t.exposeString('prefix', { description: 'The first 12 characters of the key.' }),
    last4: t.exposeString('last4', { description: 'The last 4 characters of the key.' }),
    revoked: t.exposeBoolean('revoked', { description: 'Whether the key has been revoked since.' }),
  }),
});

const TokenClassEnum = builder.enumType('PricedTokenClass', {
  description: 'A class of tokens with a price of its own.',
  values: {
    input: { value: 'input', description: 'Prompt tokens.' },
    output: { value: 'output', description: 'Completion tokens.' },
  } as const,
});

const CostLineRef = builder.objectRef<CostLineView>('CostLine').implement({
  description: 'One token class of a cost: tokens × price per 1,000,000 tokens.',
  fields: (t) => ({
    tokenClass: t.expose('tokenClass', { type: TokenClassEnum, description: 'Which tokens.' }),
    tokens: t.exposeInt('tokens', { description: 'How many were billed.' }),
    listPricePerMillion: t.expose('listPricePerMillion', { type: MoneyRef, description: 'List price per 1,000,000 tokens.' }),
    promotionBasisPoints: t.exposeInt('promotionBasisPoints', { description: 'Promotion applied to the list price, in basis points (7000 = 70 % off); 0 at list price.' }),
    pricePerMillion: t.expose('pricePerMillion', { type: MoneyRef, description: 'Price charged per 1,000,000 tokens: list × (1 − promotion), rounded to whole micros.' }),
    subtotal: t.exposeString('subtotal', { description: 'tokens × price ÷ 1,000,000, exactly, as a decimal of the currency.' }),
  }),
});

const CostBreakdownRef = builder.objectRef<CostBreakdownView>('CostBreakdown').implement({
  description:
    "How a request's cost was computed by the pricing code that billed it: the token lines, their exact sum, rounded up to whole micros, never above the reservation. Priced at the model's current rates: `matchesCharge` is false when prices changed since.",
  fields: (t) => ({
    currency: t.exposeString('currency', { description: 'ISO 4217 code of every amount.' }),
    paidFromCredit: t.exposeBoolean('paidFromCredit', { description: 'Paid from prepaid credit (the pools were exhausted): at list price, no promotion.' }),
    lines: t.expose('lines', { type: [CostLineRef], description: 'Input, then output.' }),
    exact: t.exposeString('exact', { description: "The lines' exact sum, as a decimal of the currency." }),
    rounded: t.expose('rounded', { type: MoneyRef, description: 'The sum rounded up to whole micro-units.' }),
    reserved: t.expose('reserved', { type: MoneyRef, description: 'What the request reserved before it ran (its worst case).' }),
    cappedAtReservation: t.exposeBoolean('cappedAtReservation', { description: 'The rounded sum was above the reservation, so the reservation was charged.' }),
    total: t.expose('total', { type: MoneyRef, description: 'The cost: the rounded sum, at most the reservation.' }),
    matchesCharge: t.exposeBoolean('matchesCharge', { description: "Whether total is the request's cost as charged (false only when prices changed since)." }),
  }),
});

export const UsageRecordRef = builder.objectRef<UsageRecord>('UsageRecord').implement({
  description: 'One metered request in the usage ledger.',
  fields: (t) => ({
    requestId: t.exposeString('requestId', { description: 'The id svc gave the request (x-request-id, unless the client sent its own x-svc-request-id).' }),
    clientRequestId: t.exposeString('clientRequestId', { nullable: true, description: 'The x-svc-request-id the client sent for tracing, if any.' }),
    product: t.expose('product', { type: ProductEnum, description: 'Which product was metered.' }),
    unit: t.expose('unit', { type: MeterUnitEnum, nullable: true, description: 'What was produced besides tokens, or null (chat).' }),
    unitQuantity: t.exposeFloat('unitQuantity', { nullable: true, description: 'How many of `unit` (images, seconds, searches).' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the request was settled.' }),
    model: t.exposeString('model', { description: 'Product model id the client asked for, and was billed as (e.g. `auto`).' }),
    routedModel: t.exposeString('routedModel', { description: 'Product model id it resolved to: what the reply named as `model` (e.g. `svc-2.1-fast` for `auto`).' }),
    class: t.expose('class', { type: ModelClassEnum, description: 'Pool class the request was billed to.' }),
    stream: t.exposeBoolean('stream', { description: 'Whether the reply was streamed.' }),
    inputTokens: t.exposeInt('inputTokens', { description: 'Prompt tokens billed.' }),
    outputTokens: t.exposeInt('outputTokens', { description: 'Completion tokens billed.' }),
    estimated: t.exposeBoolean('estimated', { description: 'True when the model server reported no usage and the tokens were counted by svc.' }),
    cost: t.expose('cost', { type: MoneyRef, description: 'Charged to the pool, at effective prices (the x-svc-cost its reply carried).' }),
    reserved: t.expose('reserved', { type: MoneyRef, description: 'Reserved before it ran (its worst case); the cost never exceeds it.' }),
    paidFromCredit: t.exposeBoolean('paidFromCredit', { description: 'The pools were exhausted and prepaid credit paid it, at list price.' }),
    pricing: t.field({
      type: CostBreakdownRef,
      nullable: true,
      description: "How the cost was computed (tokens × price, promotion, rounding); null when the request's model is no longer configured.",
      resolve: (record, _args, { services }) => services.usage.pricing(record),
    }),
    status: t.expose('status', { type: UsageStatusEnum, description: 'How the request ended.' }),
    latencyMs: t.exposeInt('latencyMs', { description: 'Time from admission to the end of the reply, in milliseconds.' }),
    channel: t.exposeString('channel', { description: 'Where it came from: api, cli, web or enterprise.' }),
    credentialKind: t.exposeString('credentialKind', { description: 'Credential used: api_key, session_token, web_session, enterprise_key or mcp_token (an MCP client signed in by OAuth).' }),
    key: t.expose('key', { type: UsageKeyRef, nullable: true, description: 'The API key that made it (name, prefix, last 4); null for a session (browser, CLI) or an MCP client token.' }),
    durationSeconds: t.float({ description: 'Time from arrival to the end of the reply, in seconds (millisecond precision).', resolve: (record) => record.latencyMs / 1000 }),
    refunded: t.boolean({ description: 'Whether the request was refunded in full (it failed before any output): nothing was charged.', resolve: (record) => record.status === 'refunded' }),
    errorCode: t.exposeString('errorCode', { nullable: true, description: 'A failed request: the error code its client was told (e.g. upstream_timeout); null when it did not fail.' }),
    errorStage: t.exposeString('errorStage', { nullable: true, description: 'A failed request: the stage that failed (upstream, stream, …); null when it did not fail.' }),
    upstreamStatus: t.exposeInt('upstreamStatus', { nullable: true, description: "The model server's HTTP status, once it was asked." }),
    deployment: t.exposeString('deployment', { nullable: true, description: 'Label of the deployment that served it (never an address).' }),
    clientIp: t.exposeString('clientIp', { nullable: true, description: 'The address an organisation key connected from; null for personal keys and sessions.' }),
    accountId: t.exposeID('accountId', { description: 'The account whose credential made the request.' }),
    payerKind: t.exposeString('payerKind', { description: 'Who paid: account, or organisation (its keys).' }),
    payerId: t.exposeID('payerId', { description: 'The account (or organisation) whose pools were charged.' }),
  }),
});

builder.queryField('myRequest', (t) =>
  t.field({
    type: UsageRecordRef,
    nullable: true,
    authScopes: { signedIn: true },
    description:
      "One of the signed-in account's requests, by the id its reply carried in x-request-id (svc's, or the x-svc-request-id the client sent); null when there is none or it is someone else's (same as GET /api/membership/usage/requests/{id}).",
    args: { requestId: t.arg.string({ required: true, description: 'mbr_… as the reply carried it.' }) },
    resolve: (_root, args, { services, principal }) => services.usage.request(principal!.payer, args.requestId),
  }),
);

const UsagePageInfoRef = builder.objectRef<UsageHistoryPage['pageInfo']>('UsagePageInfo').implement({
  description: 'Where a page of usage history ends.',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', { description: 'Whether older requests follow.' }),
    endCursor: t.exposeString('endCursor', { nullable: true, description: 'Pass as `after` for the next (older) page; null on an empty page.' }),
  }),
});

export const UsageHistoryRef = builder.objectRef<UsageHistoryPage>('UsageHistory').implement({
  description: "A page of the signed-in account's requests, newest first.",
  fields: (t) => ({
    nodes: t.expose('nodes', { type: [UsageRecordRef], description: 'The requests of this page, newest first.' }),
    pageInfo: t.expose('pageInfo', { type: UsagePageInfoRef, description: 'Cursor of the next page.' }),
  }),
});

builder.queryField('usageHistory', (t) =>
  t.field({
    type: UsageHistoryRef,
    authScopes: { signedIn: true },
    description: "The signed-in account's recent requests from the usage ledger, newest first (same as GET /api/membership/usage/history).",
    args: {
      first: t.arg.int({ defaultValue: HISTORY_DEFAULT_PAGE, description: `Page size, 1 to ${HISTORY_MAX_PAGE}.` }),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
    },
    resolve: (_root, args, { services, principal }) => services.usage.history(principal!.payer, args),
  }),
);

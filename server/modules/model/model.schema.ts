import { builder } from '../../graphql-core/builder.ts';
import type { Money } from '../../config/money.ts';
import type { ProductModel, TokenPrice } from './model.service.ts';
import type { UpstreamCheck, UpstreamStatus } from './upstream-status.ts';

export const ModelClassEnum = builder.enumType('ModelClass', {
  description: 'Pricing and pool class: fast (Fast / Light) or premium (Standard / Flagship).',
  values: {
    fast: { value: 'fast', description: 'Fast / Light tier.' },
    premium: { value: 'premium', description: 'Standard / Flagship tier.' },
  } as const,
});

const ModelKindEnum = builder.enumType('ModelKind', {
  description: 'What a model produces.',
  values: {
    chat: { value: 'chat', description: 'Text, through /v1/chat/completions (and /v1/responses, /v1/completions).' },
    search: { value: 'search', description: 'svc.search.v1 results, through chat or the web_search tool.' },
    image: { value: 'image', description: 'Images, through chat (Markdown links) and /v1/images/generations.' },
    speech: { value: 'speech', description: 'Speech, through /v1/audio/speech.' },
    music: { value: 'music', description: 'Songs, through /v1/audio/speech.' },
    embedding: { value: 'embedding', description: 'Embedding vectors, through /v1/embeddings.' },
  } as const,
});

export const MoneyRef = builder.objectRef<Money>('Money').implement({
  description: 'An amount of money with its explicit currency.',
  fields: (t) => ({
    amountMicros: t.expose('amountMicros', { type: 'Micros', description: 'Integer micro-units of the currency.' }),
    amount: t.exposeString('amount', { description: 'The same amount as a decimal string, e.g. "0.042".' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code.' }),
  }),
});

const TokenPriceRef = builder.objectRef<TokenPrice>('TokenPrice').implement({
  description: 'A price per 1,000,000 tokens, before and after the current promotion.',
  fields: (t) => ({
    list: t.expose('list', { type: MoneyRef, description: 'List price.' }),
    effective: t.expose('effective', { type: MoneyRef, description: 'Price after the promotion for this class.' }),
  }),
});

const ModelPriceRef = builder.objectRef<ProductModel['price']>('ModelPrice').implement({
  description: 'Token prices of a model.',
  fields: (t) => ({
    perTokens: t.exposeInt('perTokens', { description: 'Prices are per this many tokens (1,000,000).' }),
    discount: t.exposeFloat('discount', { description: 'Promotion as a fraction: 0.7 means 70 % off the list price.' }),
    input: t.expose('input', { type: TokenPriceRef, description: 'Price of input (prompt) tokens.' }),
    output: t.expose('output', { type: TokenPriceRef, description: 'Price of output (completion) tokens.' }),
  }),
});

export const ProductModelRef = builder.objectRef<ProductModel>('ProductModel').implement({
  description: 'A product model id accepted by /v1/chat/completions.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The id clients send as `model`.' }),
    name: t.exposeString('name', { description: 'What people read (config name; the id when unset).' }),
    kind: t.expose('kind', { type: ModelKindEnum, description: 'What it produces, and through which endpoint.' }),
    contextLength: t.exposeInt('contextLength', { description: 'Context window in tokens, prompt and output together (context_length in /v1/models).' }),
    class: t.expose('class', { type: ModelClassEnum, description: 'Pricing and pool class.' }),
    tierLabel: t.exposeString('tierLabel', { description: 'Human name of the tier.' }),
    intendedUse: t.exposeString('intendedUse', { description: 'What the model is for.' }),
    maxOutputTokens: t.exposeInt('maxOutputTokens', { description: 'Largest accepted max_tokens.' }),
    routesTo: t.exposeString('routesTo', { nullable: true, description: 'For auto: the model it routes to.' }),
    price: t.expose('price', { type: ModelPriceRef, description: 'Token prices.' }),
  }),
});

builder.queryField('models', (t) =>
  t.field({
    type: [ProductModelRef],
    description: 'The public model catalogue with list and promoted prices.',
    resolve: (_root, _args, { services }) => services.models.models,
  }),
);

const UpstreamSourceEnum = builder.enumType('UpstreamSource', {
  description: 'Where the model servers chat goes to were configured.',
  values: {
    none: { value: 'none', description: 'Nowhere: chat answers 503 upstream_not_configured.' },
    env: { value: 'env', description: 'SVC_UPSTREAM_URL.' },
    discovered: { value: 'discovered', description: 'A model server found on this machine at start (upstreamDiscovery).' },
    config: { value: 'config', description: 'upstreams and models.<id>.deployments in the config file.' },
  } as const,
});

const UpstreamProblemEnum = builder.enumType('UpstreamProblem', {
  description: 'Why a model server did not answer GET …/models.',
  values: {
    refused: { value: 'refused', description: 'Connection refused: nothing listens there.' },
    timeout: { value: 'timeout', description: 'No answer within 5 seconds.' },
    http_status: { value: 'http_status', description: 'It answered 5xx, or 401/403 (svc\'s key is refused): see httpStatus.' },
    unreachable: { value: 'unreachable', description: 'Any other network failure (host not found, TLS, reset).' },
  } as const,
});

const UpstreamCheckRef = builder.objectRef<UpstreamCheck>('UpstreamCheck').implement({
  description: 'One model server and whether it answered the last check.',
  fields: (t) => ({
    label: t.exposeString('label', { description: 'default (the quick-start upstream) or the upstream\'s configured label.' }),
    baseUrl: t.exposeString('baseUrl', { description: 'Its OpenAI-compatible base URL (staff only).' }),
    answering: t.exposeBoolean('answering', { description: 'GET {baseUrl}/models got an answer other than 5xx, 401 or 403.' }),
    problem: t.expose('problem', { type: UpstreamProblemEnum, nullable: true, description: 'Why it did not, or null.' }),
    httpStatus: t.exposeInt('httpStatus', { nullable: true, description: 'The HTTP status of its answer, when there was one.' }),
  }),
});

const UpstreamStatusRef = builder.objectRef<UpstreamStatus>('UpstreamStatus').implement({
  description: 'Whether chat can be answered: model servers configured, and answering.',
  fields: (t) => ({
    configured: t.exposeBoolean('configured', { description: 'At least one model server is configured (or was found at start).' }),
    source: t.expose('source', { type: UpstreamSourceEnum, description: 'Where the configuration came from.' }),
    answering: t.exposeBoolean('answering', { description: 'Every configured model server answered the last check.' }),
    checkedAt: t.expose('checkedAt', { type: 'DateTime', nullable: true, description: 'When they were last checked.' }),
    upstreams: t.expose('upstreams', { type: [UpstreamCheckRef], description: 'Each model server and its last check.' }),
    discoveryPorts: t.exposeIntList('discoveryPorts', { description: 'Ports on 127.0.0.1 tried at start when nothing was configured (empty when discovery did not run).' }),
  }),
});

builder.queryField('upstreamStatus', (t) =>
  t.field({
    type: UpstreamStatusRef,
    authScopes: { signedIn: true },
    description: 'Staff: whether a model server is configured and answering (checked again when older than gateway.upstreamCheckSeconds).',
    resolve: (_root, _args, { principal, services }) => services.upstreamStatus.status(principal),
  }),
);

builder.subscriptionField('upstreamStatusChanged', (t) =>
  t.field({
    type: UpstreamStatusRef,
    authScopes: { signedIn: true },
    description: 'Staff: the upstream status at once, then whenever it changes (checked every gateway.upstreamCheckSeconds while subscribed).',
    subscribe: (_root, _args, { principal, services }) => services.upstreamStatus.watch(principal),
    resolve: (status) => status,
  }),
);

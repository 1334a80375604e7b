import { builder } from '../../graphql-core/builder.ts';
import { MoneyRef } from '../model/model.schema.ts';
import type { PoolFit, Quote, QuoteRefusal } from './quote.service.ts';

const QuoteEndpointEnum = builder.enumType('QuoteEndpoint', {
  description: 'Which API a quoted body is for.',
  values: {
    chat_completions: { value: 'chat.completions', description: 'POST /v1/chat/completions.' },
    messages: { value: 'messages', description: 'POST /v1/messages (Anthropic Messages API).' },
    responses: { value: 'responses', description: 'POST /v1/responses.' },
  } as const,
});

const QuoteLineRef = builder.objectRef<Quote['lines'][number]>('QuoteLine').implement({
  description: 'One token class of the worst case: tokens × price per 1,000,000 tokens.',
  fields: (t) => ({
    tokenClass: t.exposeString('tokenClass', { description: 'input or output.' }),
    tokens: t.exposeInt('tokens', { description: 'The most tokens of this class the request may be billed.' }),
    pricePerMillion: t.expose('pricePerMillion', { type: MoneyRef, description: 'Price per 1,000,000 tokens, promotion applied.' }),
    listPricePerMillion: t.expose('listPricePerMillion', { type: MoneyRef, description: 'List price per 1,000,000 tokens.' }),
    promotionBasisPoints: t.exposeInt('promotionBasisPoints', { description: 'Promotion in basis points (7000 = 70 % off).' }),
  }),
});

const QuotePoolRef = builder.objectRef<PoolFit>('QuotePool').implement({
  description: "One of the payer's pools of the model's class, as it stands now.",
  fields: (t) => ({
    window: t.exposeString('window', { description: 'day, week or month.' }),
    limit: t.expose('limit', { type: MoneyRef, description: 'Included per window.' }),
    used: t.expose('used', { type: MoneyRef, description: 'Used now, running reservations included.' }),
    remaining: t.expose('remaining', { type: MoneyRef, description: 'limit − used, never below zero.' }),
    fits: t.exposeBoolean('fits', { description: 'The reservation fits in what remains.' }),
  }),
});

const QuoteKeyCapRef = builder.objectRef<Quote['keyCaps'][number]>('QuoteKeyCap').implement({
  description: "A spend cap of the API key the quote was asked with, and what the key has spent against it.",
  fields: (t) => ({
    window: t.exposeString('window', { description: 'day or month.' }),
    limit: t.expose('limit', { type: MoneyRef, description: 'The cap.' }),
    used: t.expose('used', { type: MoneyRef, description: "Spent or held now by the key's requests (running ones' worst cases included), paid from pools or credit." }),
    remaining: t.expose('remaining', { type: MoneyRef, description: 'limit − used, never below zero.' }),
    fits: t.exposeBoolean('fits', { description: 'The reservation fits in what remains of the cap.' }),
  }),
});

const QuoteRefusalRef = builder.objectRef<QuoteRefusal>('QuoteRefusal').implement({
  description: 'The error the request would get if sent now: the same code, status, messages and details.',
  fields: (t) => ({
    code: t.exposeString('code', { description: 'Error code (key_budget_exceeded).' }),
    status: t.exposeInt('status', { description: 'HTTP status.' }),
    message: t.exposeString('message', { description: 'English message.' }),
    messageZh: t.exposeString('messageZh', { description: 'Chinese message.' }),
    details: t.expose('details', { type: 'JSON', description: "The error's details (keyLimit, keyBudget)." }),
  }),
});

const QuoteRef = builder.objectRef<Quote>('Quote').implement({
  description: 'What a request would reserve and cost at most, worked out by the gateway\'s own planning and admission code, without sending it.',
  fields: (t) => ({
    endpoint: t.expose('endpoint', { type: QuoteEndpointEnum, description: 'The API the body is for.' }),
    model: t.exposeString('model', { description: 'Product model id it is billed as.' }),
    routedModel: t.exposeString('routedModel', { description: 'Product model id it resolves to.' }),
    class: t.exposeString('class', { description: 'Pool class: fast or premium.' }),
    stream: t.exposeBoolean('stream', { description: 'Whether it would stream.' }),
    worstCaseInputTokens: t.int({ description: 'Prompt bound: the request size in bytes (a token is at least a byte).', resolve: (quote) => quote.worstCase.inputTokens }),
    worstCaseOutputTokens: t.int({ description: 'Output bound: n × the output cap.', resolve: (quote) => quote.worstCase.outputTokens }),
    maxTokensClampedTo: t.exposeInt('maxTokensClampedTo', { nullable: true, description: "The model's output cap, when the body asked for more (it is served with this)." }),
    reservation: t.expose('reservation', { type: MoneyRef, description: 'Reserved at admission against every window of the class: the most the request can cost.' }),
    lines: t.expose('lines', { type: [QuoteLineRef], description: 'The worst case priced per token class.' }),
    pools: t.expose('pools', { type: [QuotePoolRef], description: "The payer's pools of the class now." }),
    keyCaps: t.expose('keyCaps', { type: [QuoteKeyCapRef], description: "The calling key's spend caps, if any, with what it has spent." }),
    keyCapRefusal: t.expose('keyCapRefusal', {
      type: QuoteRefusalRef,
      nullable: true,
      description: "The refusal the key's spend caps as they stand would give the request (whichever source, pools or credit, pays), or null.",
    }),
    fits: t.exposeBoolean('fits', { description: "The pools and the key's caps as they stand could take the reservation now (others may take room before it is sent)." }),
  }),
});

builder.queryField('quote', (t) =>
  t.field({
    type: QuoteRef,
    authScopes: { signedIn: true },
    description: 'What `body` sent to `endpoint` would reserve and cost at most, without sending it (same as POST /api/membership/v1/quote). A body the endpoint would refuse gets its error.',
    args: {
      endpoint: t.arg({ type: QuoteEndpointEnum, required: true, description: 'The API the body is for.' }),
      body: t.arg({ type: 'JSON', required: true, description: 'The request body, as it would be sent.' }),
    },
    resolve: (_root, args, { services, principal, client }) => services.quotes.quote(principal!, args.endpoint, args.body, client.ip ?? ''),
  }),
);

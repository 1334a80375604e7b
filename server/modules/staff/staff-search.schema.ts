/** `staffSearch(query)`: the admin app's one search box (staff-search.service.ts). */
import { builder } from '../../graphql-core/builder.ts';
import { AccountRef } from '../account/account.schema.ts';
import { UsageKeyRef, UsageRecordRef } from '../usage/usage.schema.ts';
import type { SearchApplication, SearchHit, SearchOrder, SearchResult } from './staff-search.service.ts';

const SearchHitKindEnum = builder.enumType('SearchHitKind', {
  description: 'What kind of record a search hit is.',
  values: {
    account: { value: 'account', description: "A person's account." },
    organisation: { value: 'organisation', description: 'An organisation (an account of kind organisation).' },
    api_key: { value: 'api_key', description: 'A personal or organisation API key.' },
    request: { value: 'request', description: 'A metered request in the usage ledger.' },
    order: { value: 'order', description: 'A payment order.' },
    application: { value: 'application', description: 'An enterprise application.' },
  } as const,
});

const SearchMatchEnum = builder.enumType('SearchMatch', {
  description: 'Which field of the record the search text matched.',
  values: {
    id: { value: 'id', description: 'The record id, exactly.' },
    email: { value: 'email', description: 'The start of the email address.' },
    email_domain: { value: 'email_domain', description: 'The start of the email address’s domain.' },
    organisation_name: { value: 'organisation_name', description: "The start of the organisation's name (any case)." },
    key: { value: 'key', description: 'The whole key (matched by its hash).' },
    key_prefix: { value: 'key_prefix', description: 'The key’s prefix (and last 4, when given as prefix…last4).' },
    request_id: { value: 'request_id', description: "svc's request id, exactly." },
    client_request_id: { value: 'client_request_id', description: 'The x-svc-request-id the client sent, exactly.' },
    order_id: { value: 'order_id', description: 'The order number, exactly.' },
    trade_number: { value: 'trade_number', description: "The payment provider's trade number, exactly." },
  } as const,
});

const SearchShapeEnum = builder.enumType('SearchShape', {
  description: 'How the search text was read.',
  values: {
    id: { value: 'id', description: 'A record id (uuid).' },
    key: { value: 'key', description: 'An API key or the start of one (svc_live_…, svc_ent_…).' },
    request: { value: 'request', description: 'A request id (mbr_…).' },
    order: { value: 'order', description: 'An order number (svc…); names and emails starting with it are searched too.' },
    email: { value: 'email', description: 'The start of an email address.' },
    domain: { value: 'domain', description: 'An email domain, or the start of one (@acme).' },
    text: { value: 'text', description: 'Organisation names and email addresses starting with it, and a provider trade number.' },
  } as const,
});

const SearchOrderRef = builder.objectRef<SearchOrder>('SearchOrder').implement({
  description: 'An order as a search hit shows it.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Order number (out_trade_no).' }),
    state: t.exposeString('state', { description: 'created, paid, failed, expired or refunded.' }),
    packageId: t.exposeString('packageId', { description: 'The package bought.' }),
    provider: t.exposeString('provider', { description: 'alipay, wechat, stripe or sandbox.' }),
    amountMinor: t.exposeInt('amountMinor', { description: 'Charged, in minor units of the currency.' }),
    amount: t.exposeString('amount', { description: 'The same as a decimal string, e.g. "65.00".' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 code.' }),
    providerTradeNo: t.exposeString('providerTradeNo', { nullable: true, description: "The provider's trade number, once known." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the checkout opened.' }),
  }),
});

const SearchApplicationRef = builder.objectRef<SearchApplication>('SearchApplication').implement({
  description: 'An enterprise application as a search hit shows it.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Application id.' }),
    organisation: t.exposeString('organisation', { description: 'The organisation name applied for.' }),
    state: t.exposeString('state', { description: 'pending_review, approved, rejected or withdrawn.' }),
    kind: t.exposeString('kind', { description: 'commercial or enterprise.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was submitted.' }),
  }),
});

const SearchHitRef = builder.objectRef<SearchHit>('SearchHit').implement({
  description: 'One record the staff search found; the field named by `kind` holds it.',
  fields: (t) => ({
    kind: t.expose('kind', { type: SearchHitKindEnum, description: 'What kind of record it is.' }),
    id: t.exposeID('id', { description: "The record's id: account, key, request (mbr_…), order number or application." }),
    matched: t.expose('matched', { type: SearchMatchEnum, description: 'Which field the text matched.' }),
    account: t.expose('account', {
      type: AccountRef,
      nullable: true,
      description: 'The account it belongs to: itself (account, organisation), the owner (key), the payer (request, order), the applicant (application).',
    }),
    organisationName: t.exposeString('organisationName', { nullable: true, description: "The organisation's name, for an organisation or one of its keys." }),
    key: t.expose('key', { type: UsageKeyRef, nullable: true, description: 'The key, for an api_key hit.' }),
    request: t.expose('request', { type: UsageRecordRef, nullable: true, description: 'The request, for a request hit.' }),
    order: t.expose('order', { type: SearchOrderRef, nullable: true, description: 'The order, for an order hit.' }),
    application: t.expose('application', { type: SearchApplicationRef, nullable: true, description: 'The application, for an application hit.' }),
  }),
});

const StaffSearchResultRef = builder.objectRef<SearchResult>('StaffSearchResult').implement({
  description: 'What the staff search box found.',
  fields: (t) => ({
    query: t.exposeString('query', { description: 'The text searched, trimmed.' }),
    shape: t.expose('shape', { type: SearchShapeEnum, description: 'How the text was read.' }),
    hits: t.expose('hits', { type: [SearchHitRef], description: 'Exact matches first, then up to ten per kind of prefix match.' }),
    truncated: t.exposeBoolean('truncated', { description: 'More records start with this text than were returned: type more of it.' }),
  }),
});

builder.queryField('staffSearch', (t) =>
  t.field({
    type: StaffSearchResultRef,
    authScopes: { signedIn: true },
    description:
      'Staff: one search box for accounts (email or its start, @domain), organisations (name start), API keys (whole, svc_live_…/svc_ent_… prefix, or prefix…last4), requests (mbr_…), orders (number or provider trade number) and record ids (support and admin, from a web session). Every lookup is index-backed.',
    args: { query: t.arg.string({ required: true, description: 'What was typed, 1 to 254 characters.' }) },
    resolve: (_root, args, { principal, services }) => services.staffSearch.search(principal, args.query),
  }),
);

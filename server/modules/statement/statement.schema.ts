/**
 * GraphQL for the organisation's monthly statement: `organisationStatement(organisationId, month)` and
 * `Organisation.viewerCanReadStatements`. The resolver calls `services.statements`, which checks the rights —
 * the same method as GET /api/membership/enterprise/organisations/{orgId}/statements/{month}.
 */
import * as authz from '../../authz/authz.ts';
import { builder } from '../../graphql-core/builder.ts';
import { OrganisationRef } from '../enterprise/enterprise.schema.ts';
import { MoneyRef } from '../model/model.schema.ts';
import type { CreditMovement, KeyUsageLine, ModelUsageLine, PaymentTotal, Statement, StatementCredit, StatementOrganisation, StatementPayment, StatementUsage } from './statement.service.ts';

const StatementUsageRef = builder.objectRef<StatementUsage>('StatementUsage').implement({
  description: 'Requests, tokens and cost summed over the month.',
  fields: (t) => ({
    requests: t.exposeInt('requests', { description: 'Requests (every status; failed ones cost nothing).' }),
    inputTokens: t.exposeInt('inputTokens', { description: 'Input tokens.' }),
    outputTokens: t.exposeInt('outputTokens', { description: 'Output tokens.' }),
    cost: t.expose('cost', { type: MoneyRef, description: 'What they cost.' }),
  }),
});

const ModelUsageLineRef = builder.objectRef<ModelUsageLine>('StatementModelLine').implement({
  description: "One product model's usage in the month.",
  fields: (t) => ({
    model: t.exposeString('model', { description: 'The product model id.' }),
    usage: t.field({ type: StatementUsageRef, description: 'Its figures.', resolve: (line) => line }),
  }),
});

const KeyUsageLineRef = builder.objectRef<KeyUsageLine>('StatementKeyLine').implement({
  description: "One key's usage in the month (sessions: one line per kind).",
  fields: (t) => ({
    credentialKind: t.exposeString('credentialKind', { description: 'api_key, enterprise_key, session_token or web_session.' }),
    keyId: t.exposeID('keyId', { nullable: true, description: 'The key; null for sessions.' }),
    name: t.exposeString('name', { nullable: true, description: "The key's name." }),
    prefix: t.exposeString('prefix', { nullable: true, description: "The key's prefix." }),
    last4: t.exposeString('last4', { nullable: true, description: "The key's last four characters." }),
    revoked: t.exposeBoolean('revoked', { description: 'Whether the key has been revoked since.' }),
    usage: t.field({ type: StatementUsageRef, description: 'Its figures.', resolve: (line) => line }),
  }),
});

const StatementPaymentRef = builder.objectRef<StatementPayment>('StatementPayment').implement({
  description: 'An order paid (or refunded) in the month.',
  fields: (t) => ({
    orderId: t.exposeID('orderId', { description: 'The order id (its receipt is /account/billing/orders/{id}).' }),
    packageId: t.exposeString('packageId', { description: 'The package bought, or `credit` for a credit top-up.' }),
    kind: t.exposeString('kind', { description: '`package` or `credit`.' }),
    provider: t.exposeString('provider', { description: 'Who took the payment.' }),
    state: t.exposeString('state', { description: 'The order state now.' }),
    amount: t.expose('amount', { type: MoneyRef, description: 'What was paid, in the currency paid.' }),
    paidAt: t.expose('paidAt', { type: 'DateTime', nullable: true, description: 'When it was paid.' }),
    refundedAt: t.expose('refundedAt', { type: 'DateTime', nullable: true, description: 'When it was refunded, if it was.' }),
  }),
});

const PaymentTotalRef = builder.objectRef<PaymentTotal>('StatementPaymentTotal').implement({
  description: 'Payments of the month in one currency.',
  fields: (t) => ({
    currency: t.exposeString('currency', { description: 'ISO 4217 code.' }),
    paid: t.expose('paid', { type: MoneyRef, description: 'Paid in the month.' }),
    refunded: t.expose('refunded', { type: MoneyRef, description: 'Refunded in the month.' }),
    net: t.expose('net', { type: MoneyRef, description: 'Paid less refunded.' }),
  }),
});

const CreditMovementRef = builder.objectRef<CreditMovement>('StatementCreditMovement').implement({
  description: 'Credit entries of one kind in the month, summed.',
  fields: (t) => ({
    kind: t.exposeString('kind', { description: 'purchase, code, spend, refund or adjustment.' }),
    entries: t.exposeInt('entries', { description: 'How many entries.' }),
    amount: t.expose('amount', { type: MoneyRef, description: 'Their sum (signed).' }),
  }),
});

const StatementCreditRef = builder.objectRef<StatementCredit>('StatementCredit').implement({
  description: 'The credit ledger across the month.',
  fields: (t) => ({
    opening: t.expose('opening', { type: MoneyRef, description: 'The balance when the month began.' }),
    closing: t.expose('closing', { type: MoneyRef, description: 'The balance when it ended (or now, for the running month).' }),
    movements: t.expose('movements', { type: [CreditMovementRef], description: 'What moved it, by kind.' }),
  }),
});

const StatementOrganisationRef = builder.objectRef<StatementOrganisation>('StatementOrganisation').implement({
  description: 'Who the statement is for, and its billing details.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Organisation id.' }),
    name: t.exposeString('name', { description: 'Its name.' }),
    packageId: t.exposeString('packageId', { description: 'Its package now.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    contactEmail: t.exposeString('contactEmail', { nullable: true, description: 'The billing contact from its application.' }),
    website: t.exposeString('website', { nullable: true, description: 'Its website, if given.' }),
    country: t.exposeString('country', { nullable: true, description: 'Its country (ISO 3166-1 alpha-2).' }),
    ownerEmail: t.exposeString('ownerEmail', { nullable: true, description: "Its owner's email." }),
  }),
});

const StatementRef = builder.objectRef<Statement>('OrganisationStatement').implement({
  description: "An organisation's statement for one calendar month (in the service's time zone), from the ledger's rollups.",
  fields: (t) => ({
    number: t.exposeString('number', { description: 'ST-YYYYMM-XXXXXXXX: the month and the organisation, the same every time.' }),
    month: t.exposeString('month', { description: 'YYYY-MM.' }),
    periodStart: t.expose('periodStart', { type: 'DateTime', description: 'The first instant of the month.' }),
    periodEnd: t.expose('periodEnd', { type: 'DateTime', description: 'The first instant of the next month (exclusive).' }),
    lastDay: t.exposeString('lastDay', { description: 'The last day covered, YYYY-MM-DD.' }),
    timezone: t.exposeString('timezone', { description: 'The time zone the month is cut in.' }),
    currency: t.exposeString('currency', { description: "The account's currency (usage and credit)." }),
    complete: t.exposeBoolean('complete', { description: 'False while the month is running: its figures are so far.' }),
    generatedAt: t.expose('generatedAt', { type: 'DateTime', description: 'When this statement was generated.' }),
    organisation: t.expose('organisation', { type: StatementOrganisationRef, description: 'Who it is for.' }),
    usageByModel: t.expose('usageByModel', { type: [ModelUsageLineRef], description: 'Usage by product model, most costly first.' }),
    usageByKey: t.expose('usageByKey', { type: [KeyUsageLineRef], description: 'Usage by key, most costly first.' }),
    usageTotal: t.expose('usageTotal', { type: StatementUsageRef, description: "All usage in the account's currency." }),
    payments: t.expose('payments', { type: [StatementPaymentRef], description: 'Orders paid in the month.' }),
    refunds: t.expose('refunds', { type: [StatementPaymentRef], description: 'Orders refunded in the month.' }),
    paymentTotals: t.expose('paymentTotals', { type: [PaymentTotalRef], description: 'Paid, refunded and net per currency.' }),
    credit: t.expose('credit', { type: StatementCreditRef, nullable: true, description: 'Opening and closing credit; null when it never had credit.' }),
  }),
});

builder.queryField('organisationStatement', (t) =>
  t.field({
    type: StatementRef,
    authScopes: { signedIn: true },
    description: "An organisation's monthly statement, for its owner and admins. Same as GET /api/membership/enterprise/organisations/{orgId}/statements/{month}.",
    args: {
      organisationId: t.arg.id({ required: true, description: 'Organisation id.' }),
      month: t.arg.string({ required: true, description: 'YYYY-MM; the running month gives its figures so far.' }),
    },
    resolve: (_root, args, { principal, services }) => services.statements.organisation(principal, String(args.organisationId), args.month),
  }),
);

builder.objectField(OrganisationRef, 'viewerCanReadStatements', (t) =>
  t.boolean({
    description: 'Whether you may read its monthly statements (owner and admins).',
    resolve: (organisation, _args, { principal }) => authz.can(principal, 'organisation:billing:read', { type: 'organisation', id: organisation.id, membership: organisation.viewerRole }),
  }),
);

/**
 * Prepaid credit over GraphQL (issue 51 item 4): `credits`, `creditEntries`, `buyCredit`, `redeemCode`,
 * `setPayFromCredit`, the live `creditUpdated`; staff's `creditCodeBatches` and `mintCreditCodes`.
 * Resolvers call `services.credits`, which checks the rights — the same methods as credit.rest.ts.
 */
import { builder } from '../../graphql-core/builder.ts';
import { CheckoutRef, idOrNull, PaymentDeviceEnum, PaymentProviderEnum } from '../billing/billing.schema.ts';
import { MoneyRef } from '../model/model.schema.ts';
import { creditKinds, type CreditEntryView } from './credit.ledger.ts';
import { CREDIT_PAGE_DEFAULT, type CodeBatchView, type CreditPage, type CreditSummary } from './credit.service.ts';

const FOR_ORGANISATION = 'An organisation you own or administer; omit for your own account.';

const CreditKindEnum = builder.enumType('CreditKind', {
  description: 'Why a credit entry was appended.',
  values: Object.fromEntries(
    creditKinds.map((kind) => [
      kind,
      {
        value: kind,
        description: {
          purchase: 'Credit bought through the checkout (reference: the order id).',
          code: 'A credit code redeemed (reference: the code).',
          spend: 'A request paid from credit once its pool was exhausted: its worst case, at list price (reference: the request id).',
          refund: 'What a request paid from credit did not use, given back (reference: the request id).',
          adjustment: 'A correction, e.g. credit taken back when its order was refunded.',
        }[kind],
      },
    ]),
  ) as Record<(typeof creditKinds)[number], { value: (typeof creditKinds)[number]; description: string }>,
});

const CreditEntryRef = builder.objectRef<CreditEntryView>('CreditEntry').implement({
  description: 'One entry of the append-only credit ledger; the balance is the sum of the entries.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Entry id (increasing).' }),
    amount: t.expose('amount', { type: MoneyRef, description: 'Signed: added credit is positive, spent credit negative.' }),
    kind: t.expose('kind', { type: CreditKindEnum, description: 'Why it was appended.' }),
    reference: t.exposeString('reference', { nullable: true, description: 'The order id, code or request id it is about.' }),
    note: t.exposeString('note', { nullable: true, description: 'A note, e.g. the amount paid.' }),
    balanceAfter: t.expose('balanceAfter', { type: MoneyRef, description: 'The balance once this entry was appended.' }),
    at: t.expose('at', { type: 'DateTime', description: 'When it was appended.' }),
  }),
});

const CreditRef = builder.objectRef<CreditSummary>('Credit').implement({
  description: 'Your prepaid credit: its balance, whether it pays once a pool is exhausted, and what you can buy.',
  fields: (t) => ({
    balance: t.expose('balance', { type: MoneyRef, description: 'The sum of your credit entries.' }),
    payFromCredit: t.exposeBoolean('payFromCredit', { description: 'When a pool is exhausted, requests are paid from credit at list price instead of refused with 402.' }),
    topUpAmounts: t.expose('topUpAmounts', { type: [MoneyRef], description: 'The amounts the Credits page offers to buy.' }),
    minTopUp: t.expose('minTopUp', { type: MoneyRef, description: 'The smallest custom amount.' }),
    maxTopUp: t.expose('maxTopUp', { type: MoneyRef, description: 'The largest custom amount.' }),
  }),
});

const CreditPageRef = builder.objectRef<CreditPage>('CreditEntryPage').implement({
  description: 'A page of credit entries, newest first.',
  fields: (t) => ({
    entries: t.expose('entries', { type: [CreditEntryRef], description: 'The entries.' }),
    nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `after` for older entries; null on the last page.' }),
  }),
});

const RedemptionRef = builder.objectRef<{ entry: CreditEntryView; summary: CreditSummary }>('CodeRedemption').implement({
  description: 'A redeemed credit code: its entry and the credit after it.',
  fields: (t) => ({
    entry: t.expose('entry', { type: CreditEntryRef, description: 'The `code` entry appended.' }),
    credit: t.expose('summary', { type: CreditRef, description: 'Your credit now.' }),
  }),
});

const CodeBatchRef = builder.objectRef<CodeBatchView>('CreditCodeBatch').implement({
  description: 'Staff: a batch of credit codes.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Batch id; its CSV is at /api/membership/credits/code-batches/{id}/codes.csv.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was minted.' }),
    createdBy: t.exposeID('createdBy', { nullable: true, description: 'The admin who minted it; null when the operator minted it with `svc credits mint`.' }),
    value: t.expose('value', { type: MoneyRef, description: 'What each code is worth.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When its codes stop redeeming; null: never.' }),
    usesPerCode: t.exposeInt('usesPerCode', { description: 'How many accounts may redeem each code (each once).' }),
    codeCount: t.exposeInt('codeCount', { description: 'How many codes.' }),
    usesLeft: t.exposeInt('usesLeft', { description: 'Redemptions left over all its codes.' }),
    note: t.exposeString('note', { nullable: true, description: 'What it is for.' }),
  }),
});

const MintedRef = builder.objectRef<{ batch: CodeBatchView; codes: string[] }>('MintedCreditCodes').implement({
  description: 'Staff: a batch just minted, with its codes.',
  fields: (t) => ({
    batch: t.expose('batch', { type: CodeBatchRef, description: 'The batch.' }),
    codes: t.exposeStringList('codes', { description: 'Its codes (also in its CSV).' }),
  }),
});

builder.queryField('credits', (t) =>
  t.field({
    type: CreditRef,
    authScopes: { signedIn: true },
    description: "Your prepaid credit, or (organisationId) that organisation's for its owner and admins. Same as GET /api/membership/credits.",
    args: { organisationId: t.arg.id({ description: FOR_ORGANISATION }) },
    resolve: (_root, args, { principal, services }) => services.credits.summary(principal, idOrNull(args.organisationId)),
  }),
);

builder.queryField('creditEntries', (t) =>
  t.field({
    type: CreditPageRef,
    authScopes: { signedIn: true },
    description: "Your credit entries, or (organisationId) that organisation's, newest first. Same as GET /api/membership/credits/entries.",
    args: {
      first: t.arg.int({ defaultValue: CREDIT_PAGE_DEFAULT, description: 'How many, 1 to 200.' }),
      after: t.arg.string({ description: 'A cursor from the previous page.' }),
      organisationId: t.arg.id({ description: FOR_ORGANISATION }),
    },
    resolve: (_root, args, { principal, services }) => services.credits.entries(principal, { first: args.first ?? null, after: args.after ?? null }, idOrNull(args.organisationId)),
  }),
);

builder.mutationField('setPayFromCredit', (t) =>
  t.field({
    type: CreditRef,
    authScopes: { signedIn: true },
    description: 'Pay from credit (at list price) when a pool is exhausted, instead of a 402 — or stop; for you, or (organisationId) for that organisation. From a web session.',
    args: { on: t.arg.boolean({ required: true, description: 'true to pay from credit.' }), organisationId: t.arg.id({ description: FOR_ORGANISATION }) },
    resolve: (_root, args, { principal, services }) => services.credits.setPayFromCredit(principal, args.on, idOrNull(args.organisationId)),
  }),
);

builder.mutationField('buyCredit', (t) =>
  t.field({
    type: CheckoutRef,
    authScopes: { signedIn: true },
    description: 'Buys credit through the checkout: creates a top-up order and starts the payment; paid, the credit is added once. Same as POST /api/membership/credits/buy.',
    args: {
      amount: t.arg.string({ required: true, description: 'A decimal amount of the credit’s currency, e.g. "10".' }),
      provider: t.arg({ type: PaymentProviderEnum, required: true, description: 'Who takes the payment.' }),
      device: t.arg({ type: PaymentDeviceEnum, description: 'Alipay: desktop (default) or mobile page.' }),
      organisationId: t.arg.id({ description: FOR_ORGANISATION }),
    },
    resolve: (_root, args, { principal, services, requestId }) =>
      services.credits.buy(principal, { amount: args.amount, provider: args.provider, device: args.device ?? null, organisationId: idOrNull(args.organisationId) }, { requestId }),
  }),
);

builder.mutationField('redeemCode', (t) =>
  t.field({
    type: RedemptionRef,
    authScopes: { signedIn: true },
    description: 'Redeems a credit code for your account (once per account; a single-use code once at all). Same as POST /api/membership/credits/redeem.',
    args: { code: t.arg.string({ required: true, description: 'The code, e.g. SVC-ABCD-EFGH-JKLM-NPQR (case, spaces and dashes do not matter).' }) },
    resolve: (_root, args, { principal, services, requestId, client }) => services.credits.redeem(principal, args.code, { ip: client.ip ?? null, requestId }),
  }),
);

builder.subscriptionField('creditUpdated', (t) =>
  t.field({
    type: CreditRef,
    authScopes: { signedIn: true },
    description: "Your credit (or, with organisationId, that organisation's), now and again whenever it changes on any instance (a purchase, a code, a request paid from credit).",
    args: { organisationId: t.arg.id({ description: FOR_ORGANISATION }) },
    subscribe: async (_root, args, { principal, services }) => services.creditEvents.watch(await services.credits.accountOf(principal, idOrNull(args.organisationId))),
    resolve: (generation, args, { principal, services }) => services.credits.summary(principal, idOrNull(args.organisationId), generation),
  }),
);

// Staff (admins).

builder.queryField('creditCodeBatches', (t) =>
  t.field({
    type: [CodeBatchRef],
    authScopes: { signedIn: true },
    description: 'Admin: credit code batches, newest first.',
    args: { first: t.arg.int({ defaultValue: 50, description: 'How many, 1 to 200.' }) },
    resolve: (_root, args, { principal, services }) => services.credits.batches(principal, args.first ?? 50),
  }),
);

builder.mutationField('mintCreditCodes', (t) =>
  t.field({
    type: MintedRef,
    authScopes: { signedIn: true },
    description: 'Admin: mints a batch of credit codes (audited). Export it as CSV from /api/membership/credits/code-batches/{id}/codes.csv.',
    args: {
      value: t.arg.string({ required: true, description: 'What each code is worth, e.g. "5".' }),
      count: t.arg.int({ required: true, description: 'How many codes, 1 to 10,000.' }),
      usesPerCode: t.arg.int({ defaultValue: 1, description: 'How many accounts may redeem each code.' }),
      expiresAt: t.arg({ type: 'DateTime', description: 'When the codes stop redeeming; omit for never.' }),
      note: t.arg.string({ description: 'What the batch is for.' }),
      currency: t.arg.string({ description: 'Must be the service currency (the default).' }),
    },
    resolve: (_root, args, { principal, services, requestId }) =>
      services.credits.mint(
        principal,
        { value: args.value, count: args.count, usesPerCode: args.usesPerCode ?? null, expiresAt: args.expiresAt ?? null, note: args.note ?? null, currency: args.currency ?? null },
        { requestId },
      ),
  }),
);

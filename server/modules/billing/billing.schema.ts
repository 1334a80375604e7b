/**
 * Checkout, orders and the subscription (DESIGN §8.6) for members — and, with `organisationId`, for an
 * organisation its owner or an admin pays for; order lookup,
 * re-query and refund for staff. Resolvers call `services.checkout` / `services.subscriptions`, which check the rights
 * (`billing:read`, `billing:manage`, `order:read`, `order:requery`, `order:refund`) — the same methods as
 * the REST routes in billing.rest.ts.
 */
import * as authz from '../../authz/authz.ts';
import { builder } from '../../graphql-core/builder.ts';
import { formatMinor } from '../../config/money.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { AccountRef } from '../account/account.schema.ts';
import type { AccountView } from '../account/account.service.ts';
import { PlanPackageRef } from '../plan/plan.schema.ts';
import type { PlanPackage } from '../plan/plan.service.ts';
import { orderStates } from './billing.entity.ts';
import type { Checkout, OrderView } from './billing.service.ts';
import { ORDERS_DEFAULT_PAGE, ORDERS_MAX_PAGE, type NoticeView, type ProviderInfo, type RequeryResult } from './checkout.service.ts';
import { paymentProviderIds } from './providers/provider.ts';
import type { CheckoutQuote, SubscriptionView } from './subscription.service.ts';

export const OrderStateEnum = builder.enumType('OrderState', {
  description: 'Where an order is: created → paid | failed | expired; paid → refunded, or paid → refund_pending → refunded | refund_failed.',
  values: Object.fromEntries(
    orderStates.map((state) => [
      state,
      {
        value: state,
        description: {
          created: 'Waiting for the payment (expires after 2 hours).',
          paid: 'Paid: the package was applied.',
          failed: 'The payment failed or was cancelled; nothing was charged.',
          expired: 'Not paid in time; closed at the provider.',
          refunded: 'Paid, then refunded in full: the provider returned the money.',
          refund_pending: 'A refund was accepted by the provider and the money is on its way (WeChat Pay PROCESSING); the package stays until it arrives.',
          refund_failed: 'The provider gave the refund up (WeChat Pay CLOSED or ABNORMAL): no money was returned; staff may refund again.',
        }[state],
      },
    ]),
  ) as Record<(typeof orderStates)[number], { value: (typeof orderStates)[number]; description: string }>,
});

export const PaymentProviderEnum = builder.enumType('PaymentProvider', {
  description: 'A way to pay.',
  values: Object.fromEntries(
    paymentProviderIds.map((id) => [
      id,
      {
        value: id,
        description: { alipay: 'Alipay (CNY): a redirect to Alipay.', wechat: 'WeChat Pay Native (CNY): a QR code to scan.', stripe: 'Cards through Stripe Checkout: a redirect.', sandbox: 'The sandbox: a page that pays or fails without money (never in production).' }[id],
      },
    ]),
  ) as Record<(typeof paymentProviderIds)[number], { value: (typeof paymentProviderIds)[number]; description: string }>,
});

const PurchaseKindEnum = builder.enumType('PurchaseKind', {
  description: 'What buying a package does to the current term.',
  values: {
    start: { value: 'start', description: 'A new one-month period starts now.' },
    extend: { value: 'extend', description: 'The same package: one more month after the current period.' },
    upgrade: { value: 'upgrade', description: 'A bigger package, at once; the unused part of the current period is credited.' },
    downgrade: { value: 'downgrade', description: 'A smaller package, starting when the current period ends.' },
  } as const,
});

const SubscriptionStateEnum = builder.enumType('SubscriptionState', {
  description: 'Whether the paid term runs.',
  values: {
    active: { value: 'active', description: 'Paid and running.' },
    cancelled: { value: 'cancelled', description: 'Running until the period end, then back to Free (or to the queued package).' },
    expired: { value: 'expired', description: 'Ended: the account is on Free.' },
  } as const,
});

export const PaymentDeviceEnum = builder.enumType('PaymentDevice', {
  description: 'Which Alipay page to send the payer to.',
  values: { desktop: { value: 'desktop', description: 'alipay.trade.page.pay' }, mobile: { value: 'mobile', description: 'alipay.trade.wap.pay' } } as const,
});

export const OrderRef = builder.objectRef<OrderView>('Order').implement({
  description: 'One checkout: a month of a package, paid through one provider. Its id is the out_trade_no sent to Alipay and WeChat Pay.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Order id (out_trade_no).' }),
    accountId: t.exposeID('accountId', { description: 'The account the package is for (a member, or an organisation).' }),
    organisationId: t.exposeID('organisationId', { nullable: true, description: 'The organisation that pays, when its owner or an admin bought the package for it; null for a member’s own order.' }),
    packageId: t.exposeString('packageId', { description: 'The package bought, e.g. max_x5.' }),
    provider: t.expose('provider', { type: PaymentProviderEnum, description: 'Who takes the payment.' }),
    state: t.expose('state', { type: OrderStateEnum, description: 'created, paid, failed, expired, refunded, refund_pending or refund_failed.' }),
    amount: t.exposeString('amount', { description: 'What is charged, as a decimal with the currency’s digits, e.g. "65.00".' }),
    amountMinor: t.exposeInt('amountMinor', { description: 'What is charged, in minor units (6500 = 65.00).' }),
    listMinor: t.exposeInt('listMinor', { description: 'The package price in this currency, in minor units.' }),
    creditMinor: t.exposeInt('creditMinor', { description: 'Credit for the unused part of the previous period (upgrades), in minor units.' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 code, e.g. CNY.' }),
    providerTradeNo: t.exposeString('providerTradeNo', { nullable: true, description: 'The provider’s id of the payment (Alipay trade_no, WeChat transaction_id, Stripe session id).' }),
    payUrl: t.exposeString('payUrl', { nullable: true, description: 'Where to send the payer (Alipay, Stripe, the sandbox page).' }),
    qrCode: t.exposeString('qrCode', { nullable: true, description: 'Text to draw as a QR code (WeChat Pay code_url).' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When an unpaid order expires.' }),
    paidAt: t.expose('paidAt', { type: 'DateTime', nullable: true, description: 'When it was paid.' }),
    closedAt: t.expose('closedAt', { type: 'DateTime', nullable: true, description: 'When it failed or expired.' }),
    refundedAt: t.expose('refundedAt', { type: 'DateTime', nullable: true, description: 'When the provider returned the money.' }),
    refundRequestedAt: t.expose('refundRequestedAt', { type: 'DateTime', nullable: true, description: 'When the latest refund was asked for (it may still be pending).' }),
    refundFailure: t.string({
      nullable: true,
      description: 'Staff: why the latest refund failed, in the provider’s words (CLOSED, ABNORMAL); null for members and unless refund_failed.',
      resolve: (order, _args, { principal }) => (authz.can(principal, 'order:read') ? order.refundFailure : null),
    }),
    refundReason: t.string({
      nullable: true,
      description: 'Staff: why it was refunded (null for members).',
      resolve: (order, _args, { principal }) => (authz.can(principal, 'order:read') ? order.refundReason : null),
    }),
    notices: t.field({
      type: [NoticeRef],
      description: 'Staff: every notification and provider answer stored for this order, oldest first.',
      resolve: (order, _args, { principal, services }) => services.checkout.staffNotices(principal, order.id),
    }),
  }),
});

const NoticeRef = builder.objectRef<NoticeView>('PaymentNotice').implement({
  description: 'A notification received from a provider (or its answer to a query), with what it did.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Notice id.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it arrived.' }),
    provider: t.expose('provider', { type: PaymentProviderEnum, description: 'Which provider it came from (or was asked).' }),
    source: t.exposeString('source', { description: 'notify (pushed by the provider) or query (reconciliation asked).' }),
    verified: t.exposeBoolean('verified', { description: 'Whether its signature verified.' }),
    outcome: t.exposeString('outcome', { description: 'applied, duplicate, failed, pending, ignored, rejected, unverified or error; refund notices: refunded or refund_failed.' }),
    reason: t.exposeString('reason', { nullable: true, description: 'Why it was rejected or not verified (e.g. amount_mismatch, bad_signature).' }),
    detail: t.exposeString('detail', { nullable: true, description: 'The details of the reason.' }),
    eventId: t.exposeString('eventId', { nullable: true, description: 'The provider’s id of the notification.' }),
    providerTradeNo: t.exposeString('providerTradeNo', { nullable: true, description: 'The provider’s trade id it named.' }),
    status: t.exposeString('status', { nullable: true, description: 'paid, failed or pending (refunds: refunded, refund_failed or refund_pending), as it said.' }),
    amountMinor: t.exposeInt('amountMinor', { nullable: true, description: 'The amount it said, in minor units.' }),
    currency: t.exposeString('currency', { nullable: true, description: 'The currency it said.' }),
  }),
});

export const CheckoutRef = builder.objectRef<Checkout>('Checkout').implement({
  description: 'A new order and how to pay it: redirect to `payUrl` or draw `qrCode`.',
  fields: (t) => ({
    order: t.expose('order', { type: OrderRef, description: 'The order (state created).' }),
    payUrl: t.string({ nullable: true, description: 'Send the payer here (Alipay, Stripe, the sandbox page).', resolve: (checkout) => checkout.payUrl ?? null }),
    qrCode: t.string({ nullable: true, description: 'Draw this as a QR code (WeChat Pay).', resolve: (checkout) => checkout.qrCode ?? null }),
  }),
});

const CheckoutQuoteRef = builder.objectRef<CheckoutQuote>('CheckoutQuote').implement({
  description: 'What buying a package now would do and cost (upgrades credit the unused part of the current period).',
  fields: (t) => ({
    kind: t.expose('kind', { type: PurchaseKindEnum, description: 'start, extend, upgrade or downgrade.' }),
    packageId: t.exposeString('packageId', { description: 'The package.' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 code.' }),
    listMinor: t.exposeInt('listMinor', { description: 'The package price, in minor units.' }),
    creditMinor: t.exposeInt('creditMinor', { description: 'Credit for the unused part of the current period, in minor units.' }),
    amountDueMinor: t.exposeInt('amountDueMinor', { description: 'What the order would charge, in minor units.' }),
    amountDue: t.string({ description: 'What the order would charge, as a decimal ("65.00").', resolve: (quote) => formatMinor(quote.amountDueMinor, quote.currency) }),
    startsAt: t.expose('startsAt', { type: 'DateTime', description: 'When the package would start: now, or at the current period end.' }),
  }),
});

export const SubscriptionRef = builder.objectRef<SubscriptionView>('MembershipSubscription').implement({
  description: 'The paid term: package, current period, and what happens at its end.',
  fields: (t) => ({
    packageId: t.exposeString('packageId', { description: 'The package of the current (or last) period.' }),
    planId: t.exposeString('planId', { description: 'free, pro or max.' }),
    state: t.expose('state', { type: SubscriptionStateEnum, description: 'active, cancelled (ends at period end) or expired.' }),
    currency: t.exposeString('currency', { description: 'The currency the period was paid in (upgrades and renewals use it too).' }),
    paidMinor: t.exposeInt('paidMinor', { description: 'Paid for the current period, in minor units.' }),
    currentPeriodStart: t.expose('currentPeriodStart', { type: 'DateTime', description: 'When the current period started.' }),
    currentPeriodEnd: t.expose('currentPeriodEnd', { type: 'DateTime', description: 'When it ends.' }),
    cancelAtPeriodEnd: t.exposeBoolean('cancelAtPeriodEnd', { description: 'Whether it ends (back to Free) at the period end.' }),
    nextPackageId: t.exposeString('nextPackageId', { nullable: true, description: 'A smaller package already paid for, starting at the period end.' }),
  }),
});

const ProviderInfoRef = builder.objectRef<ProviderInfo>('PaymentMethod').implement({
  description: 'A payment provider and whether this service takes payments through it.',
  fields: (t) => ({
    id: t.expose('id', { type: PaymentProviderEnum, description: 'alipay, wechat, stripe or sandbox.' }),
    enabled: t.exposeBoolean('enabled', { description: 'Whether it is on (configured with every key it needs).' }),
    currencies: t.stringList({ nullable: true, description: 'Currencies it charges in; null = any currency a package has a price in.', resolve: (info) => (info.currencies ? [...info.currencies] : null) }),
  }),
});

const RequeryResultRef = builder.objectRef<RequeryResult>('OrderRequery').implement({
  description: 'What asking the provider about an order found.',
  fields: (t) => ({
    result: t.exposeString('result', { description: 'paid, failed, expired, pending, refunded, refund_failed, unchanged, skipped or error.' }),
    detail: t.exposeString('detail', { nullable: true, description: 'Why it was skipped or failed.' }),
    order: t.expose('order', { type: OrderRef, description: 'The order afterwards.' }),
  }),
});

interface PackagePrice {
  currency: string;
  amountMinor: number;
}

const PackagePriceRef = builder.objectRef<PackagePrice>('PackagePrice').implement({
  description: 'What a package costs a month in one currency (checkout prices are set per currency; no exchange rates).',
  fields: (t) => ({
    currency: t.exposeString('currency', { description: 'ISO 4217 code.' }),
    amountMinor: t.exposeInt('amountMinor', { description: 'In minor units (6500 = 65.00).' }),
    amount: t.string({ description: 'As a decimal with the currency’s digits ("65.00").', resolve: (price) => formatMinor(price.amountMinor, price.currency) }),
  }),
});

builder.objectField(PlanPackageRef, 'prices', (t) =>
  t.field({
    type: [PackagePriceRef],
    description: 'Checkout prices per currency; empty when the package cannot be bought (Free).',
    resolve: (pkg: PlanPackage, _args, { services }) => services.subscriptions.prices(pkg.id),
  }),
);

builder.queryField('paymentMethods', (t) =>
  t.field({
    type: [ProviderInfoRef],
    description: 'The payment providers and which are on.',
    resolve: (_root, _args, { services }) => services.checkout.providers(),
  }),
);

builder.queryField('subscription', (t) =>
  t.field({
    type: SubscriptionRef,
    nullable: true,
    authScopes: { signedIn: true },
    description: "The signed-in account's paid term, or (organisationId) that organisation's, for its owner and admins; null when it never paid (Free).",
    args: { organisationId: t.arg.id({ description: 'An organisation you own or administer; omit for your own account.' }) },
    resolve: (_root, args, { principal, services }) => services.subscriptions.mine(principal, idOrNull(args.organisationId)),
  }),
);

builder.queryField('checkoutQuote', (t) =>
  t.field({
    type: CheckoutQuoteRef,
    authScopes: { signedIn: true },
    description: 'What buying a package now would do and cost (credit for an upgrade included).',
    args: {
      packageId: t.arg.string({ required: true, description: 'e.g. max_x5.' }),
      currency: t.arg.string({ required: true, description: 'ISO 4217 code (CNY for Alipay and WeChat Pay).' }),
      organisationId: t.arg.id({ description: 'Quote for this organisation (you own or administer it); omit for your own account.' }),
    },
    resolve: (_root, args, { principal, services }) => services.checkout.quote(principal, args.packageId, args.currency, idOrNull(args.organisationId)),
  }),
);

builder.queryField('orders', (t) =>
  t.field({
    type: [OrderRef],
    authScopes: { signedIn: true },
    description: "The signed-in account's orders, or (organisationId) that organisation's for its owner and admins, newest first.",
    args: {
      first: t.arg.int({ defaultValue: ORDERS_DEFAULT_PAGE, description: `How many, 1 to ${ORDERS_MAX_PAGE}.` }),
      organisationId: t.arg.id({ description: 'An organisation you own or administer; omit for your own account.' }),
    },
    resolve: (_root, args, { principal, services }) => services.checkout.orders(principal, args.first ?? null, idOrNull(args.organisationId)),
  }),
);

builder.queryField('order', (t) =>
  t.field({
    type: OrderRef,
    nullable: true,
    authScopes: { signedIn: true },
    description: "One of the signed-in account's orders (or of an organisation it owns or administers); null when there is none with that id.",
    args: { id: t.arg.id({ required: true, description: 'Order id.' }) },
    resolve: (_root, args, { principal, services }) => services.checkout.order(principal, String(args.id)),
  }),
);

builder.mutationField('checkout', (t) =>
  t.field({
    type: CheckoutRef,
    authScopes: { signedIn: true },
    description:
      'Buys one month of a package (from a web session): creates the order and starts the payment — for your own account, or for an organisation you own or administer (organisationId). Same as POST /api/membership/checkout.',
    args: {
      packageId: t.arg.string({ required: true, description: 'e.g. pro, max_x5, max_x20.' }),
      provider: t.arg({ type: PaymentProviderEnum, required: true, description: 'Who takes the payment.' }),
      currency: t.arg.string({ required: true, description: 'ISO 4217 code; CNY for Alipay and WeChat Pay.' }),
      device: t.arg({ type: PaymentDeviceEnum, description: 'Alipay: desktop (default) or mobile page.' }),
      organisationId: t.arg.id({ description: 'The organisation that pays (you are its owner or an admin); omit to buy for your own account.' }),
    },
    resolve: (_root, args, { principal, services, requestId }) =>
      services.checkout.checkout(
        principal,
        { packageId: args.packageId, provider: args.provider, currency: args.currency, device: args.device ?? null, organisationId: idOrNull(args.organisationId) },
        { requestId },
      ),
  }),
);

builder.mutationField('cancelSubscription', (t) =>
  t.field({
    type: SubscriptionRef,
    authScopes: { signedIn: true },
    description: 'Ends the paid term at the period end (the package stays until then): yours, or an organisation’s you own or administer.',
    args: { organisationId: t.arg.id({ description: 'An organisation you own or administer; omit for your own account.' }) },
    resolve: (_root, args, { principal, services, requestId }) => services.subscriptions.cancel(principal, { requestId, organisationId: idOrNull(args.organisationId) }),
  }),
);

builder.mutationField('resumeSubscription', (t) =>
  t.field({
    type: SubscriptionRef,
    authScopes: { signedIn: true },
    description: 'Undoes a cancellation before the period ends: yours, or an organisation’s you own or administer.',
    args: { organisationId: t.arg.id({ description: 'An organisation you own or administer; omit for your own account.' }) },
    resolve: (_root, args, { principal, services, requestId }) => services.subscriptions.resume(principal, { requestId, organisationId: idOrNull(args.organisationId) }),
  }),
);

builder.mutationField('sandboxPayOrder', (t) =>
  t.field({
    type: OrderRef,
    authScopes: { signedIn: true },
    description: 'The sandbox pay page: pays (or, with paid: false, fails) your own sandbox order, or your organisation’s, as a provider notification would. Only while the sandbox is on.',
    args: {
      orderId: t.arg.id({ required: true, description: 'Order id.' }),
      paid: t.arg.boolean({ defaultValue: true, description: 'true pays, false fails the order.' }),
    },
    resolve: (_root, args, { principal, services }) => services.checkout.sandboxSettle(principal, String(args.orderId), args.paid === false ? 'failed' : 'paid'),
  }),
);

builder.subscriptionField('orderUpdated', (t) =>
  t.field({
    type: OrderRef,
    authScopes: { signedIn: true },
    description: 'One of your orders, now and again whenever its state changes on any instance (a notification arrived, it expired, it was refunded).',
    args: { orderId: t.arg.id({ required: true, description: 'Order id.' }) },
    subscribe: async (_root, args, { principal, services }) => {
      const order = await services.checkout.order(principal, String(args.orderId));
      if (!order) throw new AppError('not_found', bilingual('No order {id}.', '没有订单 {id}。', { id: String(args.orderId) }));
      return services.orderEvents.watch(order.id);
    },
    resolve: async (generation, args, { principal, services }) => {
      const order = await services.checkout.order(principal, String(args.orderId), 'read', generation);
      if (!order) throw new AppError('not_found', bilingual('No order {id}.', '没有订单 {id}。', { id: String(args.orderId) }));
      return order;
    },
  }),
);

// Staff.

builder.queryField('staffOrder', (t) =>
  t.field({
    type: OrderRef,
    nullable: true,
    authScopes: { signedIn: true },
    description: 'Staff: an order by its id or by the provider’s trade number (support and admin, from a web session).',
    args: { key: t.arg.string({ required: true, description: 'Order id (out_trade_no) or provider trade number.' }) },
    resolve: (_root, args, { principal, services }) => services.checkout.staffOrder(principal, args.key),
  }),
);

builder.queryField('staffOrders', (t) =>
  t.field({
    type: [OrderRef],
    authScopes: { signedIn: true },
    description: 'Staff: orders, newest first, of one account or of all.',
    args: {
      accountId: t.arg.id({ description: 'Only this account’s orders.' }),
      state: t.arg({ type: OrderStateEnum, description: 'Only orders in this state.' }),
      first: t.arg.int({ defaultValue: ORDERS_DEFAULT_PAGE, description: `How many, 1 to ${ORDERS_MAX_PAGE}.` }),
    },
    resolve: (_root, args, { principal, services }) =>
      services.checkout.staffOrders(principal, { accountId: args.accountId == null ? null : String(args.accountId), state: args.state ?? null, first: args.first ?? null }),
  }),
);

builder.mutationField('requeryOrder', (t) =>
  t.field({
    type: RequeryResultRef,
    authScopes: { signedIn: true },
    description: 'Staff: asks the provider about an order now (a lost notification is applied; an order past its time expires). Audited.',
    args: { id: t.arg.id({ required: true, description: 'Order id.' }) },
    resolve: (_root, args, { principal, services, requestId }) => services.checkout.requery(principal, String(args.id), { requestId }),
  }),
);

builder.mutationField('refundOrder', (t) =>
  t.field({
    type: OrderRef,
    authScopes: { signedIn: true },
    description:
      'Admin: refunds a paid order (or one whose refund failed) in full through its provider, with a reason. The order is refunded — and the month it bought taken back — once the provider returns the money; until then it is refund_pending. Audited.',
    args: {
      id: t.arg.id({ required: true, description: 'Order id.' }),
      reason: t.arg.string({ required: true, description: 'Why (goes into the audit log).' }),
    },
    resolve: (_root, args, { principal, services, requestId }) => services.checkout.refund(principal, String(args.id), { reason: args.reason, requestId }),
  }),
);

builder.objectFields(AccountRef, (t) => ({
  orders: t.field({
    type: [OrderRef],
    description: "Staff: the account's orders, newest first.",
    args: { first: t.arg.int({ defaultValue: ORDERS_DEFAULT_PAGE, description: `How many, 1 to ${ORDERS_MAX_PAGE}.` }) },
    resolve: (account: AccountView, args, { principal, services }) => services.checkout.staffOrders(principal, { accountId: account.id, first: args.first ?? null }),
  }),
  subscription: t.field({
    type: SubscriptionRef,
    nullable: true,
    description: "Staff: the account's paid term; null when it never paid.",
    resolve: (account: AccountView, _args, { principal, services }) => {
      authz.assert(principal, 'order:read');
      return services.subscriptions.view(account.id);
    },
  }),
}));

export function idOrNull(id: string | number | null | undefined): string | null {
  return id === null || id === undefined ? null : String(id);
}

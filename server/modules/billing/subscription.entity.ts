import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * An account's paid term (subscription-math.ts `Term`), one row per account that ever paid. Every change
 * to what the term is worth (package, period, paid amount) bumps `version`; an upgrade order records the
 * version its credit was computed from, so the same unused time is never credited twice.
 */
export const BillingSubscription = defineEntity({
  name: 'BillingSubscription',
  tableName: 'billing_subscription',
  properties: {
    accountId: p.uuid().primary(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    version: p.integer().default(1),
    packageId: p.string().length(64),
    currency: p.string().length(3),
    paidMinor: p.integer(),
    periodStart: p.datetime(),
    periodEnd: p.datetime(),
    anchorDay: p.smallint(),
    cancelAtPeriodEnd: p.boolean().default(false),
    nextPackageId: p.string().length(64).nullable(),
    nextPaidMinor: p.integer().nullable(),
    nextCurrency: p.string().length(3).nullable(),
    /** Months of the queued package (two downgrade orders paid for the same period end queue two months). */
    nextMonths: p.integer().default(1),
    /** When the term ended and the account went back to Free; null while it runs. */
    endedAt: p.datetime().nullable(),
    lastOrderId: p.string().length(32).nullable(),
  },
});

export type IBillingSubscription = InferEntity<typeof BillingSubscription>;

/**
 * The plan lifecycle computed exactly, on real PostgreSQL with the real services and a clock the test
 * moves: start at a month end, renewal, upgrade with the unused part credited pro rata (in minor units),
 * a downgrade that waits for the period end, and expiry back to Free — table-driven across time zones
 * (one with a daylight-saving change inside the term). Payments go through the sandbox provider's signed
 * notices and `BillingOrders.handleNotification`, so the path is the one the notify route takes.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { openDatabase, type Database } from '../../../server/db/orm.ts';
import { entities } from '../../../server/modules/entities.ts';
import { openRedis, type RedisLayer } from '../../../server/infra/redis.ts';
import { Mailer } from '../../../server/modules/account/mailer.ts';
import { AuditLog } from '../../../server/modules/audit/audit.service.ts';
import { BillingOrders } from '../../../server/modules/billing/billing.service.ts';
import { BillingPayers } from '../../../server/modules/billing/payer.ts';
import { PaymentProviders } from '../../../server/modules/billing/providers/registry.ts';
import { SubscriptionService } from '../../../server/modules/billing/subscription.service.ts';
import { OrganisationRoles } from '../../../server/modules/enterprise/organisation-roles.ts';
import { IdentityService } from '../../../server/modules/identity/identity.service.ts';
import { LastUsedRecorder } from '../../../server/modules/identity/last-used.ts';
import { EntitlementCatalogue } from '../../../server/modules/plan/entitlements.ts';
import { PlanAssignments } from '../../../server/modules/plan/plan-assignment.service.ts';
import { PlanService } from '../../../server/modules/plan/plan.service.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const log = pino({ level: 'silent' });
let database: TestDatabase;
const opened: { db: Database; redis: RedisLayer; identity: IdentityService; lastUsed: LastUsedRecorder }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  for (const { db, redis, identity, lastUsed } of opened) {
    identity.close();
    await lastUsed.close();
    await redis.close();
    await db.close();
  }
  await database?.drop();
});

/** The services of one instance whose clock is `clock.now`, in time zone `timezone`. */
async function instance(timezone: string) {
  const clock = { now: 0 };
  const config = parseConfig({ server: { logLevel: 'silent', baseUrl: 'https://svc.example' }, database: { url: database.url }, timezone, payments: { sandbox: { enabled: true } } }, {});
  const db = await openDatabase(config, log, entities);
  const redis = await openRedis(config, log);
  const lastUsed = new LastUsedRecorder(db);
  const identity = new IdentityService(config, db, redis, lastUsed, []);
  opened.push({ db, redis, identity, lastUsed });
  const audit = new AuditLog(db);
  const announced: string[] = [];
  const organisationRoles = new OrganisationRoles(db);
  const planAssignments = new PlanAssignments(config, db, { plans: new PlanService(config, new EntitlementCatalogue(config)), audit, identity, usage: { changed: (id) => announced.push(id) }, organisationRoles });
  const payers = new BillingPayers(organisationRoles);
  const subscriptions = new SubscriptionService(config, db, { audit, planAssignments, mailer: new Mailer(config, log), log, payers }, { now: () => clock.now });
  const providers = new PaymentProviders(config);
  const orders = new BillingOrders(config, db, providers, subscriptions.hooks, { now: () => clock.now });

  async function member(): Promise<string> {
    const id = randomUUID();
    await database.query(`insert into "account" ("id", "created_at", "updated_at", "email") values ($1, now(), now(), $2)`, [id, `${id}@example.com`]);
    return id;
  }

  /** Buys `packageId` at `iso` (the quote, the order, the sandbox's signed notice): the order. */
  async function buy(accountId: string, packageId: string, iso: string) {
    clock.now = Date.parse(iso);
    const quote = await subscriptions.quote(accountId, packageId, 'CNY', new Date(clock.now));
    const { order } = await orders.create(accountId, packageId, 'sandbox', 'CNY', { creditMinor: quote.creditMinor, creditVersion: quote.creditVersion });
    const handled = await orders.handleNotification('sandbox', providers.sandbox!.signNotice(order, 'paid', clock.now));
    expect(handled.result.outcome).toBe('applied');
    return { quote, order: (await orders.find(order.id))! };
  }

  async function packageOf(accountId: string): Promise<{ planPackage: string; until: string | null }> {
    const { rows } = await database.query('select plan_package, plan_package_until from account where id = $1', [accountId]);
    const row = rows[0] as { plan_package: string; plan_package_until: Date | null };
    return { planPackage: row.plan_package, until: row.plan_package_until?.toISOString() ?? null };
  }

  /** The sandbox's signed "paid" notice for `order`, at the clock's time. */
  function paidNotice(order: { id: string; amountMinor: number; currency: string }) {
    return providers.sandbox!.signNotice(order, 'paid', clock.now);
  }

  return { clock, subscriptions, orders, member, buy, packageOf, paidNotice, announced };
}

/**
 * Each row: the same wall-clock story in one zone. Pro costs CNY 65.00 (6500), Max x5 CNY 138.00 (13800).
 * Start on Jan 31 at 10:00 local; renew on Feb 10 (paid through Mar 31: 13000 for the whole term); upgrade
 * on Mar 1 at 10:00 local with the unused part of the term credited; buy Pro on Mar 15 (a downgrade: it
 * waits); Max ends Apr 1 10:00 local, Pro runs to May 1 10:00 local, then Free.
 */
const stories = [
  {
    zone: 'UTC',
    start: '2027-01-31T10:00:00.000Z',
    firstEnd: '2027-02-28T10:00:00.000Z',
    renewedEnd: '2027-03-31T10:00:00.000Z',
    upgradeAt: '2027-03-01T10:00:00.000Z',
    // 30 of 59 days left: floor(13000 × 30 / 59) = floor(6610.17)
    credit: 6610,
    maxEnd: '2027-04-01T10:00:00.000Z',
    proEnd: '2027-05-01T10:00:00.000Z',
  },
  {
    zone: 'Asia/Shanghai',
    start: '2027-01-31T02:00:00.000Z',
    firstEnd: '2027-02-28T02:00:00.000Z',
    renewedEnd: '2027-03-31T02:00:00.000Z',
    upgradeAt: '2027-03-01T02:00:00.000Z',
    credit: 6610,
    maxEnd: '2027-04-01T02:00:00.000Z',
    proEnd: '2027-05-01T02:00:00.000Z',
  },
  {
    // Daylight saving starts Mar 14: the term Jan 31 10:00 EST → Mar 31 10:00 EDT is 1415 hours; at the
    // upgrade 719 are left: floor(13000 × 719 / 1415) = floor(6605.65).
    zone: 'America/New_York',
    start: '2027-01-31T15:00:00.000Z',
    firstEnd: '2027-02-28T15:00:00.000Z',
    renewedEnd: '2027-03-31T14:00:00.000Z',
    upgradeAt: '2027-03-01T15:00:00.000Z',
    credit: 6605,
    maxEnd: '2027-04-01T14:00:00.000Z',
    proEnd: '2027-05-01T14:00:00.000Z',
  },
] as const;

describe.each(stories)('the plan lifecycle in $zone', (story) => {
  it('start, renewal, upgrade with credit, downgrade at period end, expiry — exact to the minor unit', async () => {
    const svc = await instance(story.zone);
    const account = await svc.member();

    const first = await svc.buy(account, 'pro', story.start);
    expect(first.quote).toMatchObject({ kind: 'start', listMinor: 6500, creditMinor: 0, amountDueMinor: 6500 });
    expect(await svc.subscriptions.view(account)).toMatchObject({ packageId: 'pro', state: 'active', paidMinor: 6500, currentPeriodEnd: new Date(story.firstEnd) });
    expect(await svc.packageOf(account)).toEqual({ planPackage: 'pro', until: story.firstEnd });

    const renewal = await svc.buy(account, 'pro', '2027-02-10T00:00:00.000Z');
    expect(renewal.quote).toMatchObject({ kind: 'extend', amountDueMinor: 6500, startsAt: new Date(story.firstEnd) });
    expect(await svc.subscriptions.view(account)).toMatchObject({ paidMinor: 13_000, currentPeriodStart: new Date(story.start), currentPeriodEnd: new Date(story.renewedEnd) });

    const upgrade = await svc.buy(account, 'max_x5', story.upgradeAt);
    expect(upgrade.quote).toMatchObject({ kind: 'upgrade', listMinor: 13_800, creditMinor: story.credit, amountDueMinor: 13_800 - story.credit });
    expect(upgrade.order).toMatchObject({ amountMinor: 13_800 - story.credit, creditMinor: story.credit, listMinor: 13_800 });
    expect(await svc.subscriptions.view(account)).toMatchObject({
      packageId: 'max_x5',
      paidMinor: 13_800,
      currentPeriodStart: new Date(story.upgradeAt),
      currentPeriodEnd: new Date(story.maxEnd),
    });
    expect(await svc.packageOf(account)).toEqual({ planPackage: 'max_x5', until: story.maxEnd });

    const downgrade = await svc.buy(account, 'pro', '2027-03-15T12:00:00.000Z');
    expect(downgrade.quote).toMatchObject({ kind: 'downgrade', creditMinor: 0, amountDueMinor: 6500, startsAt: new Date(story.maxEnd) });
    expect(await svc.subscriptions.view(account)).toMatchObject({ packageId: 'max_x5', nextPackageId: 'pro', currentPeriodEnd: new Date(story.maxEnd) });
    // Max stays until its end; no end date while a package follows.
    expect(await svc.packageOf(account)).toEqual({ planPackage: 'max_x5', until: null });

    // One millisecond before the end nothing moves; at the end Pro starts for one month.
    expect(await svc.subscriptions.runPeriodEnd(new Date(Date.parse(story.maxEnd) - 1))).toBe(0);
    expect(await svc.subscriptions.runPeriodEnd(new Date(story.maxEnd))).toBe(1);
    expect(await svc.subscriptions.view(account, new Date(story.maxEnd))).toMatchObject({
      packageId: 'pro',
      paidMinor: 6500,
      currentPeriodStart: new Date(story.maxEnd),
      currentPeriodEnd: new Date(story.proEnd),
      nextPackageId: null,
    });
    expect(await svc.packageOf(account)).toEqual({ planPackage: 'pro', until: story.proEnd });

    // Then it expires to Free.
    expect(await svc.subscriptions.runPeriodEnd(new Date(story.proEnd))).toBe(1);
    expect(await svc.subscriptions.view(account, new Date(story.proEnd))).toMatchObject({ state: 'expired', packageId: 'pro' });
    expect(await svc.packageOf(account)).toEqual({ planPackage: 'free', until: null });
    expect(await svc.subscriptions.runPeriodEnd(new Date(Date.parse(story.proEnd) + 86_400_000))).toBe(0);
    expect(svc.announced.filter((id) => id === account).length).toBeGreaterThanOrEqual(2);
  });
});

describe('credits are spent once', () => {
  it('two upgrade orders priced from the same term: the second one paid gets the credit of the term it meets, not the old one', async () => {
    const svc = await instance('UTC');
    const account = await svc.member();
    await svc.buy(account, 'pro', '2027-04-01T00:00:00.000Z'); // 30 days, 6500
    svc.clock.now = Date.parse('2027-04-16T00:00:00.000Z'); // half left: 3250
    const quote = await svc.subscriptions.quote(account, 'max_x5', 'CNY');
    expect(quote).toMatchObject({ kind: 'upgrade', creditMinor: 3250, amountDueMinor: 10_550 });
    const x5 = (await svc.orders.create(account, 'max_x5', 'sandbox', 'CNY', { creditMinor: quote.creditMinor, creditVersion: quote.creditVersion })).order;
    const x20Quote = await svc.subscriptions.quote(account, 'max_x20', 'CNY');
    const x20 = (await svc.orders.create(account, 'max_x20', 'sandbox', 'CNY', { creditMinor: x20Quote.creditMinor, creditVersion: x20Quote.creditVersion })).order;
    expect(x20.amountMinor).toBe(28_300 - 3250);

    // Pay Max x5 first: the Pro term's credit is used.
    expect((await svc.orders.handleNotification('sandbox', svc.paidNotice(x5))).result.outcome).toBe('applied');
    expect(await svc.subscriptions.view(account)).toMatchObject({ packageId: 'max_x5', paidMinor: 13_800, currentPeriodEnd: new Date('2027-05-16T00:00:00.000Z') });
    // A day later the x20 order is paid: its credit came from the Pro term, which is gone. It is worth
    // what was paid (25050) plus the unused Max x5 time now (29 of 30 days of 13800 = 13340), against 28300.
    svc.clock.now = Date.parse('2027-04-17T00:00:00.000Z');
    expect((await svc.orders.handleNotification('sandbox', svc.paidNotice(x20))).result.outcome).toBe('applied');
    const view = (await svc.subscriptions.view(account))!;
    expect(view).toMatchObject({ packageId: 'max_x20', paidMinor: 25_050 + 13_340, currentPeriodStart: new Date('2027-04-17T00:00:00.000Z') });
    // One month (Apr 17 → May 17, 30 days) plus the surplus 10090 / 28300 of it, floor to the millisecond.
    const month = Date.parse('2027-05-17T00:00:00.000Z') - Date.parse('2027-04-17T00:00:00.000Z');
    expect(view.currentPeriodEnd.getTime()).toBe(Date.parse('2027-05-17T00:00:00.000Z') + Number((BigInt(month) * 10_090n) / 28_300n));
  });
});

describe('refunds take back the month they bought', () => {
  it('refunding a renewal shortens the term by a month; refunding the order that started it returns to Free; an order of an ended term changes nothing', async () => {
    const svc = await instance('Asia/Shanghai');
    const account = await svc.member();
    // An old term: January, ended.
    const old = await svc.buy(account, 'pro', '2027-01-10T00:00:00.000Z');
    expect(await svc.subscriptions.runPeriodEnd(new Date('2027-02-10T00:00:00.000Z'))).toBe(1);
    // A new term in March, renewed once: through May 1.
    const start = await svc.buy(account, 'pro', '2027-03-01T00:00:00.000Z');
    const renewal = await svc.buy(account, 'pro', '2027-03-05T00:00:00.000Z');
    expect(await svc.subscriptions.view(account)).toMatchObject({ currentPeriodEnd: new Date('2027-05-01T00:00:00.000Z'), paidMinor: 13_000 });

    svc.clock.now = Date.parse('2027-03-10T00:00:00.000Z');
    await svc.orders.refund(old.order.id, { reason: 'old complaint' });
    expect(await svc.subscriptions.view(account)).toMatchObject({ currentPeriodEnd: new Date('2027-05-01T00:00:00.000Z'), paidMinor: 13_000 });

    await svc.orders.refund(renewal.order.id, { reason: 'bought twice' });
    expect(await svc.subscriptions.view(account)).toMatchObject({ packageId: 'pro', state: 'active', currentPeriodEnd: new Date('2027-04-01T00:00:00.000Z'), paidMinor: 6500 });
    expect(await svc.packageOf(account)).toEqual({ planPackage: 'pro', until: '2027-04-01T00:00:00.000Z' });

    await svc.orders.refund(start.order.id, { reason: 'changed my mind' });
    expect(await svc.subscriptions.view(account)).toMatchObject({ state: 'expired' });
    expect(await svc.packageOf(account)).toEqual({ planPackage: 'free', until: null });
  });
});

describe('a credit larger than the new price', () => {
  it('charges one minor unit and lengthens the new period by the surplus, pro rata', async () => {
    const svc = await instance('UTC');
    const account = await svc.member();
    // Pro paid three months ahead: Apr 1 → Jul 1 (91 days) for 19500.
    await svc.buy(account, 'pro', '2027-04-01T00:00:00.000Z');
    await svc.buy(account, 'pro', '2027-04-01T00:00:00.000Z');
    await svc.buy(account, 'pro', '2027-04-01T00:00:00.000Z');
    expect(await svc.subscriptions.view(account)).toMatchObject({ paidMinor: 19_500, currentPeriodEnd: new Date('2027-07-01T00:00:00.000Z') });
    // On Apr 1 (nothing used yet) Max x5 (13800): the credit 19500 covers it; 1 minor unit is charged.
    const upgrade = await svc.buy(account, 'max_x5', '2027-04-01T00:00:00.000Z');
    expect(upgrade.quote).toMatchObject({ kind: 'upgrade', creditMinor: 13_799, amountDueMinor: 1 });
    // Worth 1 + 19500 = 19501 against 13800: one month (30 days) + 5701/13800 of it.
    const month = Date.parse('2027-05-01T00:00:00.000Z') - Date.parse('2027-04-01T00:00:00.000Z');
    const view = (await svc.subscriptions.view(account))!;
    expect(view).toMatchObject({ packageId: 'max_x5', paidMinor: 19_501 });
    expect(view.currentPeriodEnd.getTime()).toBe(Date.parse('2027-05-01T00:00:00.000Z') + Number((BigInt(month) * 5701n) / 13_800n));
  });
});

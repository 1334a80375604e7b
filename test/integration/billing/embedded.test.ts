/** The same order and notice code on embedded PGlite (the default without DATABASE_URL). */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { openDatabase, type Database } from '../../../server/db/orm.ts';
import { entities } from '../../../server/modules/entities.ts';
import { BillingOrders } from '../../../server/modules/billing/billing.service.ts';
import { PaymentProviders } from '../../../server/modules/billing/providers/registry.ts';
import { embeddedMode } from '../../helpers/app.ts';

const mode = embeddedMode();
let db: Database;
let providers: PaymentProviders;
let orders: BillingOrders;
const paid: string[] = [];

beforeAll(async () => {
  const config = parseConfig(mode.config);
  db = await openDatabase(config, pino({ level: 'silent' }), entities);
  providers = new PaymentProviders(config);
  orders = new BillingOrders(config, db, providers, {
    async onPaid(order, tx) {
      await tx.execute('update "account" set "plan_package" = ? where "id" = ?', [order.packageId, order.accountId], { method: 'run' });
      paid.push(order.id);
    },
  });
});

afterAll(async () => {
  await db?.close();
  await mode.cleanup();
});

it('the sandbox pays an order once on PGlite, and onPaid writes in the same transaction', async () => {
  const accountId = randomUUID();
  await db.orm.em.getConnection().execute(`insert into "account" ("id", "created_at", "updated_at", "email") values (?, now(), now(), ?)`, [accountId, `${accountId}@example.com`], 'run');
  const { order } = await orders.create(accountId, 'max_x5', 'sandbox', 'USD');
  const notice = providers.sandbox!.signNotice(order, 'paid');
  const results = await Promise.all([1, 2, 3].map(() => orders.handleNotification('sandbox', notice)));
  expect(results.map((result) => result.result.outcome).sort()).toEqual(['applied', 'duplicate', 'duplicate']);
  expect(paid).toEqual([order.id]);
  const [account] = await db.orm.em.getConnection().execute<{ plan_package: string }[]>(`select "plan_package" from "account" where "id" = ?`, [accountId]);
  expect(account!.plan_package).toBe('max_x5');
  expect((await orders.find(order.id))!.state).toBe('paid');
});

it('on PGlite too, a notice with a NUL byte is kept byte for byte as unverified, and purged after the retention', async () => {
  const body = Buffer.from('{"id":"x","nul":"\u0000","bad":"\xff"}', 'latin1');
  const handled = await orders.handleNotification('sandbox', { headers: { 'x-svc-sandbox-signature': 't=1,v1=00' }, body });
  expect(handled.result).toMatchObject({ outcome: 'unverified', stored: true });
  const connection = db.orm.em.getConnection();
  const [row] = await connection.execute<{ body: Uint8Array; body_bytes: number }[]>(`select "body", "body_bytes" from "billing_notice" where not "verified"`);
  expect(Buffer.compare(Buffer.from(row!.body), body)).toBe(0);
  expect(row!.body_bytes).toBe(body.length);
  expect(await orders.purgeUnverifiedNotices(new Date(Date.now() + 8 * 86_400_000))).toBe(1);
  expect(await connection.execute(`select 1 from "billing_notice" where not "verified"`)).toEqual([]);
});

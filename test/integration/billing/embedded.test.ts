/** The same order and notice code on embedded PGlite (the default without DATABASE_URL). */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { openDatabase, type Database } from '../../../server/db/orm.ts';
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
  db = await openDatabase(config, pino({ level: 'silent' }));
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

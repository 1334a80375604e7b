/** A month of usage-ledger rows for the admin app's browser tests (English and Chinese), written straight into the test database. */
import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '../helpers/database.ts';

const models = ['svc-2.1-fast', 'svc-2.1', 'auto', 'svc-img', 'svc-2.1-search'];

/** A month of traffic: a weekly rhythm, a few failures, one bad day; spread over `accounts`. */
export async function seedLedger(database: TestDatabase, accounts: string[]): Promise<void> {
  const rows: unknown[][] = [];
  for (let back = 0; back < 30; back++) {
    const perDay = 6 + ((back * 7) % 11) + (back % 7 < 2 ? -4 : 3);
    for (let i = 0; i < perDay; i++) {
      const model = models[(i + back) % models.length]!;
      const status = back === 9 && i < 4 ? 'upstream_failed' : i % 13 === 5 ? 'refunded' : i % 17 === 3 ? 'client_disconnected' : 'ok';
      const input = 1200 + ((i * 1370 + back * 310) % 18000);
      const output = status === 'refunded' ? 0 : 300 + ((i * 710 + back * 130) % 4000);
      const cost = status === 'refunded' ? 0 : Math.round((input * 0.042 + output * 0.084) * (model === 'svc-2.1' || model === 'svc-img' ? 3 : 1));
      const at = new Date(Date.now() - back * 86_400_000 - ((i * 3_137_000) % 40_000_000));
      rows.push([`mbr_e2e${randomUUID().replaceAll('-', '')}`, accounts[(i + back) % accounts.length], model, model.includes('fast') || model === 'auto' ? 'fast' : 'premium', input, output, cost, status, at]);
    }
  }
  for (const row of rows) {
    await database.query(
      `insert into usage_ledger (request_id, account_id, payer_id, credential_kind, credential_id, channel, model, routed_model, class, stream,
         input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, latency_ms, created_at)
       values ($1, $2, $2, 'api_key', 'k', 'api', $3, $3, $4, false, $5, $6, false, $7, $7, 'USD', $8, 420, $9)`,
      row,
    );
  }
}

/**
 * Paid orders for the dashboard's revenue: two in CNY (one refunded since), one in USD; amounts in minor units.
 * Ids are shaped like real ones (letters and digits), so the staff order page can look them up.
 */
export async function seedOrders(database: TestDatabase, accountId: string): Promise<void> {
  const day = 86_400_000;
  const orders: [string, string, number, number, string | null][] = [
    ['CNY', 'alipay', 6500, 3, null],
    ['CNY', 'wechat', 6500, 5, new Date(Date.now() - 2 * day).toISOString()],
    ['USD', 'stripe', 900, 1, null],
  ];
  for (const [currency, provider, amount, daysAgo, refundedAt] of orders) {
    const at = new Date(Date.now() - daysAgo * day);
    await database.query(
      `insert into billing_order (id, created_at, updated_at, account_id, package_id, provider, amount_minor, list_minor, currency, state, expires_at, paid_at, refunded_at)
       values ($1, $2, $2, $3, 'pro', $4, $5, $5, $6, $7, $2, $2, $8)`,
      [`svce2e${randomUUID().replaceAll('-', '').slice(0, 24)}`, at, accountId, provider, amount, currency, refundedAt ? 'refunded' : 'paid', refundedAt],
    );
  }
}

/**
 * The dashboard's revenue comes from the daily revenue rollup (`billing_revenue_day`,
 * Migration20261210060000_revenue_rollup), kept exact by the orders' trigger as orders are placed, paid,
 * refunded, corrected and deleted; `svc ledger check` compares it with the orders and says when it is
 * wrong; a time-zone change re-cuts its days. Expected figures are written out by hand.
 */
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../../server/metering/ledger-archive.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed, type Person } from '../../helpers/seed.ts';

const cli = resolve(import.meta.dirname, '../../../bin/svc.ts');

let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let payer: Person;

beforeAll(async () => {
  setup = await realMode();
  app = await startApp(setup.config, { config: { timezone: 'Asia/Shanghai' } });
  payer = await seed(app).member({ tag: 'payer' });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await setup?.cleanup();
});

async function order(currency: string, amountMinor: number): Promise<string> {
  const id = `ord_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
  await setup.database.query(
    `insert into billing_order (id, created_at, updated_at, account_id, package_id, provider, amount_minor, list_minor, currency, state, expires_at)
     values ($1, now(), now(), $2, 'pro', 'sandbox', $3, $3, $4, 'created', now() + interval '2 hours')`,
    [id, payer.id, amountMinor, currency],
  );
  return id;
}

async function rollup(): Promise<string[]> {
  const { rows } = await setup.database.query(
    `select to_char(day, 'YYYY-MM-DD') || ' ' || currency || ' ' || kind || ' ' || orders || ' ' || amount_minor as line from billing_revenue_day order by day, currency, kind`,
  );
  return rows.map((row: { line: string }) => row.line);
}

describe('the daily revenue rollup (Asia/Shanghai days)', () => {
  it('follows orders as they are paid, refunded, corrected and deleted; the checker agrees', async () => {
    const a = await order('CNY', 6500);
    const b = await order('CNY', 1200);
    const c = await order('USD', 900);
    expect(await rollup()).toEqual([]); // placed, not paid: no revenue

    // 2 Nov 16:30 UTC is 3 Nov 00:30 in Shanghai; 2 Nov 15:59 UTC is still 2 Nov there.
    await setup.database.query(`update billing_order set state = 'paid', paid_at = '2026-11-02T16:30:00Z' where id = $1`, [a]);
    await setup.database.query(`update billing_order set state = 'paid', paid_at = '2026-11-02T15:59:00Z' where id = $1`, [b]);
    await setup.database.query(`update billing_order set state = 'paid', paid_at = '2026-11-03T01:00:00Z' where id = $1`, [c]);
    await setup.database.query(`update billing_order set updated_at = now() where id = $1`, [a]); // touches nothing counted
    expect(await rollup()).toEqual(['2026-11-02 CNY paid 1 1200', '2026-11-03 CNY paid 1 6500', '2026-11-03 USD paid 1 900']);

    await setup.database.query(`update billing_order set state = 'refunded', refunded_at = '2026-11-04T02:00:00Z' where id = $1`, [a]);
    expect(await rollup()).toEqual(['2026-11-02 CNY paid 1 1200', '2026-11-03 CNY paid 1 6500', '2026-11-03 USD paid 1 900', '2026-11-04 CNY refunded 1 6500']);

    // A correction moves the order's part from one day (and amount) to another; the emptied day goes.
    await setup.database.query(`update billing_order set paid_at = '2026-11-03T02:00:00Z', amount_minor = 1300 where id = $1`, [b]);
    await setup.database.query(`delete from billing_order where id = $1`, [c]);
    expect(await rollup()).toEqual(['2026-11-03 CNY paid 2 7800', '2026-11-04 CNY refunded 1 6500']);

    const check = await checkLedger(app.app.services.db);
    expect(check.differences).toEqual([]);
    expect(check.compared.revenue_day).toBe(2);
  });

  it('`svc ledger check` fails when the rollup is wrong, naming the day', async () => {
    // The command opens the database with its own config: the same time zone, or it would re-cut the days.
    const dir = mkdtempSync(join(tmpdir(), 'svc-revenue-'));
    writeFileSync(join(dir, 'svc.yaml'), 'timezone: Asia/Shanghai\n');
    const env = { ...process.env, DATABASE_URL: setup.database.url, SVC_CONFIG: join(dir, 'svc.yaml'), LANG: 'C' };
    const run = (args: string[]) => promisify(execFile)(process.execPath, [cli, ...args], { env });
    expect((await run(['ledger', 'check'])).stdout).toMatch(/^0 differences/m);
    await setup.database.query(`update billing_revenue_day set amount_minor = amount_minor + 1 where day = '2026-11-03' and kind = 'paid'`);
    try {
      const failed = await run(['ledger', 'check']).then(
        () => null,
        (error: { code: number; stdout: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stdout).toContain('revenue_day 2026-11-03 paid CNY: orders 2 orders, 7800 minor | rollup 2 orders, 7801 minor');
      expect(failed?.stdout).toMatch(/^1 differences/m);
    } finally {
      await setup.database.query(`update billing_revenue_day set amount_minor = amount_minor - 1 where day = '2026-11-03' and kind = 'paid'`);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a time-zone change re-cuts the days from the orders', async () => {
    expect(await rollup()).toEqual(['2026-11-03 CNY paid 2 7800', '2026-11-04 CNY refunded 1 6500']);
    await setup.database.query(`select usage_rollup_set_timezone('UTC')`);
    try {
      expect(await rollup()).toEqual(['2026-11-02 CNY paid 1 6500', '2026-11-03 CNY paid 1 1300', '2026-11-04 CNY refunded 1 6500']);
      expect((await checkLedger(app.app.services.db)).differences).toEqual([]);
    } finally {
      await setup.database.query(`select usage_rollup_set_timezone('Asia/Shanghai')`);
    }
    expect(await rollup()).toEqual(['2026-11-03 CNY paid 2 7800', '2026-11-04 CNY refunded 1 6500']);
  });
});

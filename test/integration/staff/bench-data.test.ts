/**
 * `npm run bench:data` cannot rot: its loader fills a database of its own at a tiny scale (every kind of row
 * it makes, in the counts it promises), svc starts on it, and every operation the bench measures answers
 * with rows — not an error, not an empty list that would be fast for the wrong reason.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { load, type LoadResult } from '../../bench/data/load.ts';
import { operations } from '../../bench/data/measure.ts';
import { migrate, startSvc, type RunningSvc } from '../../bench/data/svc.ts';
import { testDatabaseUrl } from '../../helpers/env.ts';

const database = `svc_test_bench_data_${randomBytes(4).toString('hex')}`;
let loaded: LoadResult;
let svc: RunningSvc | undefined;

beforeAll(async () => {
  loaded = await load({ adminUrl: testDatabaseUrl, database, scale: 0.001, migrate, log: () => undefined });
  svc = await startSvc(loaded.databaseUrl, 'ignore');
}, 240_000);

afterAll(async () => {
  await svc?.stop();
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  await admin.query(`drop database if exists "${database}" with (force)`);
  await admin.end();
});

describe('bench:data at scale 0.001', () => {
  it('loads the sizes it promises', () => {
    const { sizes, counts } = loaded;
    expect(sizes).toEqual({ accounts: 1000, organisations: 20, applications: 50, orders: 500, ledger: 20_000, audit: 1000 });
    // Accounts: the people plus one account per organisation (its payer).
    expect(counts.account).toBe(sizes.accounts + sizes.organisations);
    expect(counts.organisation).toBe(sizes.organisations);
    expect(counts.organisation_member).toBe(sizes.organisations * 3);
    expect(counts.enterprise_application).toBe(sizes.applications);
    expect(counts.billing_order).toBe(sizes.orders);
    expect(counts.usage_ledger).toBe(sizes.ledger);
    expect(counts.audit_log).toBe(sizes.audit);
    expect(counts.api_key).toBeGreaterThan(sizes.accounts / 3);
    expect(counts.organisation_connection).toBeGreaterThan(sizes.organisations * 3);
    // The timeline: a submission for every application, a decision for every one not waiting.
    expect(counts.enterprise_application_event).toBeGreaterThan(sizes.applications);
  });

  it('puts the ledger rows in their months and fills the turn ids and rollups from them', async () => {
    const db = new pg.Client({ connectionString: loaded.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`select
          (select count(*) from usage_ledger_default)::int as strays,
          (select count(*) from usage_ledger_request)::int as turns,
          (select sum(requests) from usage_rollup_hour)::int as hour,
          (select sum(requests) from usage_rollup_day)::int as day,
          (select sum(requests) from usage_rollup_model_day)::int as model_day,
          (select sum(cost_micros) from usage_ledger)::text as cost,
          (select sum(cost_micros) from usage_rollup_day)::text as day_cost`);
      const ledger = loaded.sizes.ledger;
      expect(rows[0]).toEqual({ strays: 0, turns: ledger, hour: ledger, day: ledger, model_day: ledger, cost: rows[0].day_cost, day_cost: expect.any(String) });
    } finally {
      await db.end();
    }
  });

  it('builds the ledger indexes again on every month, not on the partitioned parent alone', async () => {
    const db = new pg.Client({ connectionString: loaded.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ name: string; valid: boolean; months: number; built: number }>(`select i.indexrelid::regclass::text as name, i.indisvalid as valid,
          (select count(*) from pg_inherits h where h.inhparent = 'usage_ledger'::regclass)::int as months,
          (select count(*) from pg_inherits h where h.inhparent = i.indexrelid)::int as built
        from pg_index i where i.indrelid = 'usage_ledger'::regclass`);
      expect(rows.map((row) => row.name)).toContain('usage_ledger_payer_created_idx');
      for (const row of rows) expect(row, row.name).toMatchObject({ valid: true, built: row.months });
    } finally {
      await db.end();
    }
  });

  it('every measured operation answers with rows', async () => {
    const list = await operations(svc!.origin, loaded.databaseUrl, loaded.sizes);
    expect(list.length).toBeGreaterThanOrEqual(25);
    const empty: string[] = [];
    for (const op of list) if ((await op.run()) === 0) empty.push(op.name);
    expect(empty).toEqual([]);
  });
});

/**
 * `stats(range)` stays fast on a big ledger because it reads the rollup by day, model and status
 * (`usage_rollup_model_day`, Migration20261209010000_ledger_partitions), never the ledger's rows. This
 * generates a year of ledger rows (200,000 by default; `STATS_PLAN_ROWS=1000000` for the full-size proof),
 * and checks with EXPLAIN that the service's own query text touches the rollup alone and reads no more rows
 * than days × models × statuses. The timings are printed for the record.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../server/authz/principal.ts';
import { LEDGER_STATS_SQL, REVENUE_STATS_SQL } from '../../../server/modules/staff/stats.service.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';

const rowCount = Number(process.env.STATS_PLAN_ROWS ?? 200_000);
const accountCount = Math.max(1000, Math.round(rowCount / 10));
const models = ['auto', 'svc-2.1-fast', 'svc-ocr', 'svc-tts', 'svc', 'svc-2.1', 'svc-2.1-pro', 'svc-2.1-rev', 'svc-2.1-search', 'svc-img', 'svc-music'];

let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let client: pg.Client;
let staff: Principal;

beforeAll(async () => {
  setup = await realMode();
  app = await startApp(setup.config);
  const support = await seed(app).staff('support');
  staff = { accountId: support.id, email: support.email, role: 'support', payer: { kind: 'account', id: support.id, package: 'free' }, credential: { kind: 'web_session', id: support.id } };
  client = new pg.Client({ connectionString: setup.database.url });
  await client.connect();
  const started = performance.now();
  // A year of traffic, evenly spread, from 5,000 payers over the eleven product models; ~4 % not ok.
  await client.query(
    `insert into usage_ledger (request_id, account_id, payer_id, credential_kind, credential_id, channel, model, routed_model, class, stream,
       input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, latency_ms, created_at)
     select 'mbr_gen' || g, x.payer, x.payer, 'api_key', 'k', 'api', x.model, x.model, case when g % 3 = 0 then 'premium' else 'fast' end, false,
            g % 2000, g % 700, false, g % 5000, g % 5000, 'USD',
            case when g % 50 = 0 then 'refunded' when g % 97 = 0 then 'upstream_failed' when g % 89 = 0 then 'client_disconnected' else 'ok' end,
            100, now() - (g::double precision / $1) * interval '365 days'
       from generate_series(1, $1::int) as g,
            lateral (select ($2::text[])[1 + g % 11] as model, ('00000000-0000-4000-8000-' || lpad((g % 5000)::text, 12, '0'))::uuid as payer) as x`,
    [rowCount, models],
  );
  await client.query(
    `insert into account (id, created_at, updated_at, email, role, plan_package)
     select gen_random_uuid(), now() - (g::double precision / $1) * interval '700 days', now(), 'gen-' || g || '@' || (array['example.com', 'corp.example', 'mail.example'])[1 + g % 3], 'member', 'free'
       from generate_series(1, $1::int) as g`,
    [accountCount],
  );
  // Autovacuum does this on its own for an insert-only table (PostgreSQL 13+); the index-only scan needs
  // the visibility map it sets.
  await client.query('vacuum analyze usage_ledger');
  await client.query('vacuum analyze account');
  console.log(`stats plan: ${rowCount.toLocaleString('en')} ledger rows and ${accountCount.toLocaleString('en')} accounts generated in ${Math.round(performance.now() - started)} ms`);
}, 600_000);

afterAll(async () => {
  await client?.end();
  await app?.close();
  await setup?.cleanup();
});

interface PlanNode {
  'Node Type': string;
  Strategy?: string;
  'Index Name'?: string;
  'Heap Fetches'?: number;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

function label(node: PlanNode): string {
  return node.Strategy ? `${node['Node Type']} (${node.Strategy})` : node['Node Type'];
}

async function explain(days: number, text = LEDGER_STATS_SQL): Promise<{ plan: PlanNode; executionMs: number }> {
  let n = 0;
  const sql = text.replace(/\?/g, () => `$${++n}`);
  // UTC days, as the service cuts them with the default time zone: today and the days before it.
  const today = new Date(new Date().setUTCHours(0, 0, 0, 0));
  const first = new Date(today.getTime() - (days - 1) * 86_400_000);
  const dates = [first.toISOString().slice(0, 10), today.toISOString().slice(0, 10)];
  const { rows } = await client.query(`explain (analyze, buffers, format json) ${sql}`, text === LEDGER_STATS_SQL ? ['USD', ...dates] : dates);
  const [result] = rows[0]['QUERY PLAN'] as [{ Plan: PlanNode; 'Execution Time': number }];
  return { plan: result.Plan, executionMs: result['Execution Time'] };
}

describe(`stats on ${rowCount.toLocaleString('en')} ledger rows`, () => {
  it('the ledger side reads the day rollup alone, a few rows per day and model, for 7, 30 and 90 days', async () => {
    for (const days of [7, 30, 90]) {
      const { plan, executionMs } = await explain(days);
      const scans = nodes(plan).filter((node) => /Scan/.test(node['Node Type']));
      console.log(`stats plan: ${days} days → ${nodes(plan).map(label).join(' > ')}: ${scans.map((s) => `${s['Node Type']} on ${s['Relation Name'] ?? '?'} using ${s['Index Name'] ?? '(none)'}, ${s['Actual Rows']} rows`).join('; ')}; ${executionMs.toFixed(1)} ms`);
      expect(scans.length, `${days} days`).toBeGreaterThan(0);
      for (const scan of scans) {
        // A bitmap index scan names its index only.
        expect(scan['Relation Name'] ?? scan['Index Name'], `${days} days`).toMatch(/^usage_rollup_model_day(_pkey)?$/);
        // Eleven models, four statuses: the rows of the range, not of the ledger.
        expect(scan['Actual Rows'], `${days} days`).toBeLessThanOrEqual(days * 11 * 4);
      }
    }
  });

  it('the revenue side reads the daily revenue rollup alone, never the orders', async () => {
    // A year of orders, two a minute-ish, some refunded: what the rollup stands for.
    await client.query(
      `insert into billing_order (id, created_at, updated_at, account_id, package_id, provider, amount_minor, list_minor, currency, state, expires_at, paid_at, refunded_at)
       select 'ord_plan' || g, at, at, a.id, 'pro', 'sandbox', 6500, 6500, case when g % 3 = 0 then 'USD' else 'CNY' end,
              case when g % 40 = 0 then 'refunded' else 'paid' end, at, at, case when g % 40 = 0 then at + interval '1 day' end
         from generate_series(1, 20000) as g, lateral (select now() - (g::double precision / 20000) * interval '365 days' as at) as t,
              lateral (select id from account limit 1) as a`,
    );
    await client.query('analyze billing_revenue_day');
    for (const days of [7, 30, 90]) {
      const { plan, executionMs } = await explain(days, REVENUE_STATS_SQL);
      const scans = nodes(plan).filter((node) => /Scan/.test(node['Node Type']));
      console.log(`stats plan: revenue ${days} days → ${scans.map((s) => `${s['Node Type']} on ${s['Relation Name'] ?? s['Index Name']}, ${s['Actual Rows']} rows`).join('; ')}; ${executionMs.toFixed(1)} ms`);
      expect(scans.length, `${days} days`).toBeGreaterThan(0);
      for (const scan of scans) {
        expect(scan['Relation Name'] ?? scan['Index Name'], `${days} days`).toMatch(/^billing_revenue_day(_pkey)?$/);
        // Two currencies, paid and refunded: a few rows a day, not the orders.
        expect(scan['Actual Rows'], `${days} days`).toBeLessThanOrEqual((days + 1) * 2 * 2);
      }
    }
  });

  it('for the record: the whole service call', async () => {
    for (const range of ['last_7_days', 'last_30_days', 'last_90_days'] as const) {
      const started = performance.now();
      const stats = await app.app.services.stats.stats(staff, range);
      console.log(`stats plan: services.stats.stats(${range}) → ${stats.totals.requests.toLocaleString('en')} requests in ${Math.round(performance.now() - started)} ms`);
      expect(stats.byModel).toHaveLength(11);
    }
  });

  it(`account search over ${accountCount.toLocaleString('en')} accounts finds a full first page of matches, newest first (timings for the record)`, async () => {
    // gen-77@…, gen-770…779@… and gen-7700…7799@… are 111 matches: more than one page.
    for (const [search, expected] of [['', 25], ['corp.example', 25], ['gen-77', 25], ['nobody-at-all', 0]] as const) {
      const started = performance.now();
      const page = await app.app.services.staff.searchAccounts(staff, { search, first: 25 });
      console.log(`stats plan: accounts(search: "${search}") → ${page.nodes.length} in ${Math.round(performance.now() - started)} ms`);
      expect(page.nodes, search).toHaveLength(expected);
      expect(page.pageInfo.hasNextPage, search).toBe(expected > 0);
      for (const account of page.nodes) expect(account.email, search).toContain(search);
      const created = page.nodes.map((account) => new Date(account.createdAt).getTime());
      expect(created, search).toEqual([...created].sort((a, b) => b - a));
    }
  });
});

/**
 * The ledger partitioned by month, its rollups, and its archive (Migration20261209010000_ledger_partitions,
 * metering/ledger-archive.ts), on real PostgreSQL and on embedded PGlite:
 * - the migration moves a ledger's existing rows into their months, keeps every row (count, sums, content)
 *   and fills the rollups from them;
 * - partitions are made ahead; a row outside them lands in the default partition and moves to its month
 *   when that month is made; rows either side of a month boundary land in their months and hours;
 * - 200 simultaneous turns across two instances, then the same turns settled again: one row each, and the
 *   rollups equal the ledger (`svc ledger check` prints 0 differences, and fails on a difference);
 * - archiving months and restoring them gives back the same rows, and the dashboard does not change.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../server/db/orm.ts';
import { ensureLedgerPartitions } from '../../../server/db/ledger-upkeep.ts';
import { archiveLedger, checkLedger, ledgerPartitions, restoreLedger } from '../../../server/metering/ledger-archive.ts';
import { insertLedgerRows } from '../../../server/metering/ledger.ts';
import type { Principal } from '../../../server/authz/principal.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { embeddedMode, realMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { seed } from '../../helpers/seed.ts';
import { createMember, relaxedLimits } from '../gateway/harness.ts';

const run = promisify(execFile);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

type Query = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

function queryOf(db: Database): Query {
  return (sql, params = []) => {
    // `$n` as the ORM's `?`, once per use.
    const bound: unknown[] = [];
    const text = sql.replace(/\$(\d+)/g, (_, n: string) => (bound.push(params[Number(n) - 1]), '?'));
    return db.orm.em.fork().getConnection().execute(text, bound, 'all');
  };
}

/** Rows, tokens and cost of the ledger and of each rollup: equal when the rollups are exact. */
async function totals(query: Query): Promise<Record<'ledger' | 'hour' | 'day' | 'model_day', string>> {
  const [row] = await query(`select
      (select count(*) || '/' || coalesce(sum(input_tokens), 0) || '/' || coalesce(sum(output_tokens), 0) || '/' || coalesce(sum(cost_micros), 0) from usage_ledger) as ledger,
      (select coalesce(sum(requests), 0) || '/' || coalesce(sum(input_tokens), 0) || '/' || coalesce(sum(output_tokens), 0) || '/' || coalesce(sum(cost_micros), 0) from usage_rollup_hour) as hour,
      (select coalesce(sum(requests), 0) || '/' || coalesce(sum(input_tokens), 0) || '/' || coalesce(sum(output_tokens), 0) || '/' || coalesce(sum(cost_micros), 0) from usage_rollup_day) as day,
      (select coalesce(sum(requests), 0) || '/' || coalesce(sum(input_tokens), 0) || '/' || coalesce(sum(output_tokens), 0) || '/' || coalesce(sum(cost_micros), 0) from usage_rollup_model_day) as model_day`);
  return row as Record<'ledger' | 'hour' | 'day' | 'model_day', string>;
}

/** Every row of the ledger as text, by id: equal before and after when nothing was lost or changed. */
async function fingerprint(query: Query, where = 'true'): Promise<{ rows: number; md5: string }> {
  const [row] = await query(`select count(*) as rows, md5(coalesce(string_agg(l::text, E'\\n' order by id), '')) as md5 from (
      select id, request_id, account_id, payer_id, model, status, input_tokens, output_tokens, cost_micros, currency, created_at, unit_quantity, client_ip
        from usage_ledger where ${where}) as l`);
  return { rows: Number(row!.rows), md5: String(row!.md5) };
}

/** `n` rows for `payers` over the months before now, as an old ledger would hold them. */
function generatedRows(n: number, monthsBack: number, tag: string): string {
  return `insert into usage_ledger (request_id, account_id, payer_id, credential_kind, credential_id, channel, model, routed_model, class, stream,
      input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, latency_ms, created_at, unit_quantity)
    select 'mbr_${tag}' || g, x.payer, x.payer, 'api_key', 'k', 'api', x.model, x.model, 'fast', false,
           g % 900, g % 300, false, g * 7 % 5000, 5000, 'USD',
           case when g % 13 = 0 then 'refunded' when g % 17 = 0 then 'upstream_failed' else 'ok' end,
           10, now() - (g::double precision / ${n}) * interval '${monthsBack} months', case when g % 5 = 0 then 1.5 else null end
      from generate_series(1, ${n}) as g,
           lateral (select (array['svc-2.1-fast', 'svc-2.1', 'auto'])[1 + g % 3] as model,
                           ('00000000-0000-4000-8000-' || lpad((g % 40)::text, 12, '0'))::uuid as payer) as x`;
}

function staffOf(id: string, email: string): Principal {
  return { accountId: id, email, role: 'support', payer: { kind: 'account', id, package: 'free' }, credential: { kind: 'web_session', id } };
}

const cli = resolve(import.meta.dirname, '../../../bin/svc.ts');

describe('the ledger partitioned by month, on PostgreSQL', () => {
  let setup: Awaited<ReturnType<typeof realMode>>;
  let upstream: ScriptedUpstream;
  let one: TestApp;
  let two: TestApp;
  let db: Database;
  let query: Query;

  beforeAll(async () => {
    setup = await realMode();
    upstream = await startScriptedUpstream();
    const options = { config: relaxedLimits, env: { SVC_UPSTREAM_URL: upstream.url } };
    one = await startApp({ ...setup.config, gateway: { sweepIntervalSeconds: 3600 } }, options);
    two = await startApp({ ...setup.config, gateway: { sweepIntervalSeconds: 3600 } }, options);
    cleanups.push(setup.cleanup, () => upstream.close(), () => one.close(), () => two.close());
    db = one.app.services.db;
    query = queryOf(db);
  }, 120_000);

  it('the migration moves existing rows into their months, keeps every one, and fills the rollups from them', async () => {
    const { migrator } = db.orm;
    await migrator.down({ to: 'Migration20261208020000_embedding_product' });
    expect((await query(`select relkind from pg_class where relname = 'usage_ledger'`))[0]!.relkind).toBe('r');
    await query(generatedRows(5000, 13, 'old'));
    const before = await fingerprint(query);
    const [sums] = await query(`select count(*) as n, sum(cost_micros) as cost, sum(input_tokens) as input, sum(output_tokens) as output from usage_ledger`);

    await migrator.up();

    expect((await query(`select relkind from pg_class where relname = 'usage_ledger'`))[0]!.relkind).toBe('p');
    expect(await fingerprint(query)).toEqual(before);
    expect(before.rows).toBe(5000);
    expect((await query(`select count(*) as n, sum(cost_micros) as cost, sum(input_tokens) as input, sum(output_tokens) as output from usage_ledger`))[0]).toEqual(sums);
    // Thirteen months back to this one and two ahead, each row in its month, none left to the default.
    const months = await ledgerPartitions(db);
    expect(months.length).toBeGreaterThanOrEqual(16);
    expect(Number((await query(`select count(*) as n from usage_ledger_default`))[0]!.n)).toBe(0);
    const misplaced = await query(`select count(*) as n from usage_ledger where tableoid::regclass::text <> 'usage_ledger_' || to_char(created_at at time zone 'UTC', 'YYYY_MM')`);
    expect(Number(misplaced[0]!.n)).toBe(0);
    expect(Number((await query(`select count(*) as n from usage_ledger_request`))[0]!.n)).toBe(5000);
    const sum = await totals(query);
    expect(sum.hour).toBe(sum.ledger);
    expect(sum.day).toBe(sum.ledger);
    expect(sum.model_day).toBe(sum.ledger);
    expect((await checkLedger(db)).differences).toEqual([]);

    // New rows go on from the old ids, and a turn written again is still one row.
    const member = await seed(one).member();
    const entry = ledgerEntry(member.id, { costMicros: 40 });
    await insertLedgerRows(db, 'USD', [entry]);
    await insertLedgerRows(db, 'USD', [entry, ledgerEntry(member.id, { costMicros: 2 })]);
    await insertLedgerRows(db, 'USD', [{ ...entry, costMicros: 99 }]);
    const mine = await query(`select id, cost_micros from usage_ledger where payer_id = $1 order by id`, [member.id]);
    expect(mine.map((row) => Number(row.cost_micros))).toEqual([40, 2]);
    expect(Number(mine[0]!.id)).toBeGreaterThan(5000);
    expect((await checkLedger(db)).differences).toEqual([]);
  }, 400_000);

  it('makes partitions ahead; a row outside them waits in the default partition and moves into its month when that is made', async () => {
    expect(await ensureLedgerPartitions(db)).toBe(0);
    const now = new Date();
    const names = (await ledgerPartitions(db)).map((p) => p.month);
    for (let ahead = 0; ahead <= 2; ahead++) {
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead, 1)).toISOString().slice(0, 7);
      expect(names).toContain(month);
    }
    const member = await seed(one).member();
    const insert = (requestId: string, at: string, cost: number) =>
      query(
        `insert into usage_ledger (request_id, account_id, payer_id, credential_kind, credential_id, channel, model, routed_model, class, stream,
           input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, latency_ms, created_at)
         values ($1, $2, $2, 'api_key', 'k', 'api', 'svc-2.1-fast', 'svc-2.1-fast', 'fast', false, 3, 4, false, $3, $3, 'USD', 'ok', 5, $4)`,
        [requestId, member.id, cost, at],
      );
    await insert('mbr_boundary_last', '2031-01-31T23:59:59.999999Z', 11);
    await insert('mbr_boundary_first', '2031-02-01T00:00:00Z', 13);
    const where = (rows: Record<string, unknown>[]) => rows.map((row) => row.partition);
    expect(where(await query(`select tableoid::regclass::text as partition from usage_ledger where payer_id = $1 order by created_at`, [member.id]))).toEqual(['usage_ledger_default', 'usage_ledger_default']);

    expect(await ensureLedgerPartitions(db, new Date('2031-01-20T00:00:00Z'))).toBe(3);
    expect(where(await query(`select tableoid::regclass::text as partition from usage_ledger where payer_id = $1 order by created_at`, [member.id]))).toEqual(['usage_ledger_2031_01', 'usage_ledger_2031_02']);
    expect(Number((await query(`select count(*) as n from usage_ledger_default`))[0]!.n)).toBe(0);
    // Each in its own hour and day; the append-only rule holds on the moved rows.
    const hours = await query(`select to_char(hour at time zone 'UTC', 'YYYY-MM-DD HH24') as hour, cost_micros from usage_rollup_hour where payer_id = $1 order by hour`, [member.id]);
    expect(hours.map((h) => [h.hour, Number(h.cost_micros)])).toEqual([
      ['2031-01-31 23', 11],
      ['2031-02-01 00', 13],
    ]);
    await expect(query(`delete from usage_ledger where request_id = 'mbr_boundary_last'`)).rejects.toThrow(/append-only/);
    await expect(query(`update usage_ledger_2031_02 set cost_micros = 0 where request_id = 'mbr_boundary_first'`)).rejects.toThrow(/append-only/);
    expect((await checkLedger(db)).differences).toEqual([]);
  }, 400_000);

  it('200 simultaneous turns across two instances, then settled again: one row each, rollups equal to the ledger', async () => {
    const members = await Promise.all(Array.from({ length: 10 }, () => createMember(one)));
    // Retries: on a loaded machine the database health probe may miss its second and admission then says 503
    // (nothing sent upstream, nothing billed); a retry is then a new turn, as a client's would be.
    const clients = members.flatMap((member) => [one.url, two.url].map((url) => new OpenAI({ apiKey: member.key, baseURL: `${url}/v1`, maxRetries: 5 })));
    const before = await totals(query);
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const turns = Array.from({ length: 200 }, async (_, i) => {
      await barrier;
      return clients[i % clients.length]!.chat.completions.create({ model: i % 3 === 0 ? 'svc-2.1' : 'svc-2.1-fast', messages: [{ role: 'user', content: `turn ${i}` }], max_tokens: 20 });
    });
    release();
    const replies = await Promise.all(turns);
    expect(replies).toHaveLength(200);
    await settled(one, two);

    const payers = members.map((member) => member.accountId);
    const rows = await query(`select * from usage_ledger where payer_id = any($1::uuid[])`, [`{${payers.join(',')}}`]);
    expect(rows).toHaveLength(200);
    // A settlement retried after its commit was lost: the same turns again, on both instances at once.
    const again = rows.map((row) =>
      ledgerEntry(String(row.account_id), {
        requestId: String(row.request_id),
        model: String(row.model),
        routedModel: String(row.routed_model),
        costMicros: Number(row.cost_micros),
        inputTokens: Number(row.input_tokens),
        outputTokens: Number(row.output_tokens),
      }),
    );
    await Promise.all([insertLedgerRows(one.app.services.db, 'USD', again), insertLedgerRows(two.app.services.db, 'USD', again.slice(0, 100))]);
    expect(Number((await query(`select count(*) as n from usage_ledger where payer_id = any($1::uuid[])`, [`{${payers.join(',')}}`]))[0]!.n)).toBe(200);

    const after = await totals(query);
    expect(after.hour).toBe(after.ledger);
    expect(after.day).toBe(after.ledger);
    expect(after.model_day).toBe(after.ledger);
    expect(Number(after.ledger.split('/')[0]) - Number(before.ledger.split('/')[0])).toBe(200);
    const perPayer = await query(
      `select l.payer_id, l.n, l.cost, r.n as rn, r.cost as rcost from
         (select payer_id, count(*) as n, sum(cost_micros) as cost from usage_ledger where payer_id = any($1::uuid[]) group by 1) as l
         join (select payer_id, sum(requests) as n, sum(cost_micros) as cost from usage_rollup_day where payer_id = any($1::uuid[]) group by 1) as r using (payer_id)`,
      [`{${payers.join(',')}}`],
    );
    expect(perPayer).toHaveLength(10);
    for (const payer of perPayer) {
      expect(Number(payer.rn)).toBe(Number(payer.n));
      expect(Number(payer.rcost)).toBe(Number(payer.cost));
    }
    expect((await checkLedger(db)).differences).toEqual([]);

    // The command an operator runs says so, and fails once a rollup is wrong.
    const env = { ...process.env, DATABASE_URL: setup.database.url, LANG: 'C' };
    const ok = await run(process.execPath, [cli, 'ledger', 'check'], { env });
    expect(ok.stdout).toMatch(/^0 differences/m);
    await query(`update usage_rollup_hour set requests = requests + 1 where payer_id = $1`, [payers[0]]);
    try {
      const failed = await run(process.execPath, [cli, 'ledger', 'check'], { env }).then(
        () => null,
        (error: { code: number; stdout: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stdout).toContain(`hour `);
      expect(failed?.stdout).toContain(`payer ${payers[0]}`);
      expect(failed?.stdout).toMatch(/^[1-9]\d* differences/m);
    } finally {
      await query(`update usage_rollup_hour set requests = requests - 1 where payer_id = $1`, [payers[0]]);
    }
    expect((await checkLedger(db)).differences).toEqual([]);
  }, 400_000);

  it('archives months to files and restores them row for row; the dashboard does not change', async () => {
    const support = await seed(one).staff('support');
    const staff = staffOf(support.id, support.email);
    const stats = () => one.app.services.stats.stats(staff, 'last_90_days');
    const before = await fingerprint(query);
    const dashboard = await stats();
    const rollups = await totals(query);
    const now = new Date();
    // Everything wholly before last month: the migration's old rows (twelve months and more).
    const cut = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
    const dir = mkdtempSync(join(tmpdir(), 'svc-archive-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));

    const archived = await archiveLedger(db, cut, dir);
    expect(archived.length).toBeGreaterThanOrEqual(11);
    for (const month of archived) {
      expect(month.month < cut).toBe(true);
      expect(existsSync(month.file)).toBe(true);
    }
    const archivedRows = archived.reduce((sum, month) => sum + month.rows, 0);
    const left = await fingerprint(query);
    expect(left.rows).toBe(before.rows - archivedRows);
    expect((await ledgerPartitions(db)).every((p) => p.month >= cut)).toBe(true);
    // The rollups keep the archived months: the dashboard and the sums are as they were, and the check
    // compares what is left.
    expect(await stats()).toEqual(dashboard);
    const kept = await totals(query);
    expect([kept.hour, kept.day, kept.model_day]).toEqual([rollups.hour, rollups.day, rollups.model_day]);
    const check = await checkLedger(db);
    expect(check.differences).toEqual([]);
    expect(check.archivedMonths).toEqual(archived.map((month) => month.month));
    // Their turn ids went with them.
    expect(Number((await query(`select count(*) as n from usage_ledger_request`))[0]!.n)).toBe(left.rows);
    await expect(archiveLedger(db, '2999-01', dir)).rejects.toThrow(/after the current month/);

    for (const month of archived) expect((await restoreLedger(db, month.file)).rows).toBe(month.rows);
    expect(await fingerprint(query)).toEqual(before);
    expect(await totals(query)).toEqual(rollups);
    expect(await stats()).toEqual(dashboard);
    const restored = await checkLedger(db);
    expect(restored.differences).toEqual([]);
    expect(restored.archivedMonths).toEqual([]);
    await expect(restoreLedger(db, archived[0]!.file)).rejects.toThrow(/in the ledger already/);
    expect(await fingerprint(query)).toEqual(before);
  }, 400_000);
});

describe('the ledger partitioned by month, on embedded PGlite', () => {
  it('keeps one row per turn and exact rollups, makes months, and archives and restores', async () => {
    const mode = embeddedMode();
    const app = await startApp(mode.config);
    cleanups.push(mode.cleanup, () => app.close());
    const db = app.app.services.db;
    const query = queryOf(db);
    const member = await seed(app).member();
    const entry = ledgerEntry(member.id, { costMicros: 30, inputTokens: 7 });
    await insertLedgerRows(db, 'USD', [entry, ledgerEntry(member.id, { costMicros: 5, status: 'refunded' })]);
    await insertLedgerRows(db, 'USD', [{ ...entry, costMicros: 1 }, ledgerEntry(member.id, { costMicros: 9 })]);
    // The months the generated rows fall in (the migration made this month and the next two).
    await query(`select usage_ledger_ensure_partition(now() - make_interval(months => m)) from generate_series(1, 3) as m`);
    await query(generatedRows(300, 3, 'embedded'));
    expect(Number((await query(`select count(*) as n from usage_ledger_default`))[0]!.n)).toBe(0);
    const sum = await totals(query);
    expect(sum.ledger.split('/')[0]).toBe('303');
    expect([sum.hour, sum.day, sum.model_day]).toEqual([sum.ledger, sum.ledger, sum.ledger]);
    expect((await checkLedger(db)).differences).toEqual([]);

    const before = await fingerprint(query);
    const now = new Date();
    const cut = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
    const archived = await archiveLedger(db, cut, join(mode.dataDir, 'archive'));
    expect(archived.length).toBeGreaterThanOrEqual(1);
    expect((await fingerprint(query)).rows).toBe(before.rows - archived.reduce((n, month) => n + month.rows, 0));
    expect((await checkLedger(db)).differences).toEqual([]);
    for (const month of archived) await restoreLedger(db, month.file);
    expect(await fingerprint(query)).toEqual(before);
    expect(await totals(query)).toEqual(sum);
  }, 400_000);
});

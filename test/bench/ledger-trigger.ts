/**
 * `node test/bench/ledger-trigger.ts [--rounds=15] [--statements=200] [--batches=1,32]`: what the ledger's
 * settle trigger costs PostgreSQL per inserted row (issue 50 item 2). A scratch database with every
 * migration; settlement's own write (`insertLedgerRows`: one COPY per batch, each its own transaction) of
 * batches of chat turns spread over 500 payers and three models, as settlement rounds carry them; the CPU
 * time the backend process spent, read from /proc/<pid>/schedstat (nanoseconds on a CPU, so other
 * processes on the machine do not count). Variants, interleaved in a new order every round so drift in the
 * machine's load falls on each alike:
 *
 *   none        the trigger disabled (no turn ids, no rollups: what the insert itself costs)
 *   empty       a trigger with the same transition table whose function does nothing (the machinery's cost)
 *   settle      the settle function the migrations made (`usage_ledger_settle`)
 *   candidate   with --candidate=FILE: a `create or replace function "usage_ledger_settle"() …` to compare
 *
 * Prints the median µs of backend CPU per row and per statement for each, each trigger's cost over `none`,
 * and the least round's µs per row (on a shared machine the median moves with the load; the minimum, the
 * round least disturbed, moves less). Needs a local PostgreSQL (the backend's /proc entry).
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { CopyIn } from '../../server/db/copy-in.ts';
import { insertLedgerRows } from '../../server/metering/ledger.ts';
import { ledgerEntry } from '../helpers/ledger.ts';
import { databaseUrlOf } from './data/load.ts';
import { migrate } from './data/svc.ts';

const flags = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=');
    return [key!, value ?? 'true'] as const;
  }),
);
const rounds = Number(flags.get('rounds') ?? 15);
const statements = Number(flags.get('statements') ?? 200);
const batches = (flags.get('batches') ?? '1,32').split(',').map(Number);
const candidate = flags.get('candidate');
const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = `svc_bench_trigger_${process.pid}`;

type Variant = 'none' | 'empty' | 'settle' | 'candidate';
const variants: Variant[] = candidate ? ['none', 'empty', 'settle', 'candidate'] : ['none', 'empty', 'settle'];
const payers = Array.from({ length: 500 }, (_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`);
const models = ['svc-2.1-fast', 'svc-2.1', 'auto'];

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`create database "${database}"`);
// One connection, kept open (its backend is the process measured); a pool, as svc's, for its callback-driven COPY.
const client = new pg.Pool({ connectionString: databaseUrlOf(adminUrl, database), max: 1, idleTimeoutMillis: 0 });
try {
  await migrate(databaseUrlOf(adminUrl, database));
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const cpuNs = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  const db = {
    copy: async (sql: string, data: string) => {
      await client.query(new CopyIn(sql, data));
    },
    query: async (sql: string, params: readonly unknown[]) => {
      await client.query(sql, [...params]);
    },
  };
  // Each variant its own function and trigger, made once: switching is enabling one trigger, so no variant
  // pays for recompiling its function. The migrations' own trigger stays off.
  const settle = (await client.query<{ def: string }>(`select pg_get_functiondef('usage_ledger_settle'::regproc) as def`)).rows[0]!.def;
  const functions: Partial<Record<Exclude<Variant, 'none'>, string>> = {
    empty: `create or replace function "usage_ledger_settle"() returns trigger language plpgsql as $$ begin return null; end; $$;`,
    settle,
    ...(candidate ? { candidate: readFileSync(candidate, 'utf8') } : {}),
  };
  for (const [variant, sql] of Object.entries(functions)) {
    await client.query(sql!.replace(/(function\s+)(?:public\.)?"?usage_ledger_settle"?\(\)/i, `$1"bench_settle_${variant}"()`));
    await client.query(`create trigger "bench_settle_${variant}" after insert on usage_ledger referencing new table as new_rows for each statement execute function "bench_settle_${variant}"()`);
  }
  const use = async (variant: Variant) => {
    const switches = ['usage_ledger_settle', ...Object.keys(functions).map((name) => `bench_settle_${name}`)].map((trigger) => `${trigger === `bench_settle_${variant}` ? 'enable' : 'disable'} trigger "${trigger}"`);
    await client.query(`alter table usage_ledger ${switches.join(', ')}`);
  };
  let turn = 0;
  const batch = (size: number) =>
    Array.from({ length: size }, () => {
      turn++;
      return ledgerEntry(payers[turn % payers.length]!, { model: models[turn % models.length]!, inputTokens: turn % 900, outputTokens: turn % 300, costMicros: (turn * 7) % 5000 });
    });
  const perRow = new Map<string, number[]>();
  for (const size of batches) {
    // Warm: every payer's rollup rows exist, plans are cached, as on a running service.
    for (const variant of variants) {
      await use(variant);
      for (let i = 0; i < Math.ceil(1000 / size); i++) await insertLedgerRows(db, 'USD', batch(size));
    }
    for (let round = 0; round < rounds; round++) {
      for (const variant of shuffled(variants)) {
        await use(variant);
        for (let i = 0; i < 10; i++) await insertLedgerRows(db, 'USD', batch(size));
        const work = Array.from({ length: statements }, () => batch(size));
        const before = cpuNs();
        for (const rows of work) await insertLedgerRows(db, 'USD', rows);
        const ns = cpuNs() - before;
        const key = `${size}:${variant}`;
        perRow.set(key, [...(perRow.get(key) ?? []), ns / 1000 / (statements * size)]);
      }
    }
  }
  const exact = (
    await client.query<{ ledger: string; hour: string; day: string; model_day: string }>(`select
      (select count(*) from usage_ledger l where exists (select 1 from usage_ledger_request r where r.request_id = l.request_id)) as ledger,
      (select sum(requests) from usage_rollup_hour) as hour, (select sum(requests) from usage_rollup_day) as day, (select sum(requests) from usage_rollup_model_day) as model_day`)
  ).rows[0]!;
  process.stdout.write(`\nPostgreSQL backend CPU per ledger row (median of ${rounds} interleaved rounds of ${statements} COPY statements; /proc schedstat)\n`);
  process.stdout.write(`${'batch'.padStart(6)}  ${'variant'.padEnd(11)}  ${'µs/row'.padStart(8)}  ${'µs/stmt'.padStart(8)}  ${'trigger µs/row'.padStart(14)}  ${'least µs/row'.padStart(12)}\n`);
  for (const size of batches) {
    const none = median(perRow.get(`${size}:none`)!);
    for (const variant of variants) {
      const us = median(perRow.get(`${size}:${variant}`)!);
      const over = variant === 'none' ? '' : (us - none).toFixed(1);
      const least = Math.min(...perRow.get(`${size}:${variant}`)!);
      process.stdout.write(`${String(size).padStart(6)}  ${variant.padEnd(11)}  ${us.toFixed(1).padStart(8)}  ${(us * size).toFixed(1).padStart(8)}  ${over.padStart(14)}  ${least.toFixed(1).padStart(12)}\n`);
    }
  }
  process.stdout.write(`\nrows with a turn id (trigger on): ${exact.ledger}; rollups: hour ${exact.hour}, day ${exact.day}, model/day ${exact.model_day}\n`);
  if (!(exact.ledger === exact.hour && exact.hour === exact.day && exact.day === exact.model_day)) {
    process.stderr.write('rollups differ from the ledger rows the trigger saw\n');
    process.exitCode = 1;
  }
} finally {
  await client.end();
  await admin.query(`drop database if exists "${database}" with (force)`);
  await admin.end();
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

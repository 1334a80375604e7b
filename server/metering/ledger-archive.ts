/**
 * The ledger's old months, off the database and back (`svc ledger archive|restore|check`).
 *
 * - `archiveLedger`: each monthly partition wholly before a month is written to
 *   `<dir>/usage_ledger_YYYY_MM.jsonl.gz` (one JSON object per row, columns by name, numbers as PostgreSQL
 *   printed them), then detached and dropped in one transaction that first checks the partition still holds
 *   exactly the rows written. Its turn ids leave `usage_ledger_request` with it (no turn settles a month
 *   late); the month is listed in `usage_ledger_archive`. The rollups stay: charts and statistics do not
 *   change.
 * - `restoreLedger`: the file's rows go back into their month's partition (made again if needed), the
 *   turn ids with them, in one transaction; a row whose turn is in the ledger already refuses the whole file.
 *   Written to the partition itself, not through `usage_ledger`, so the rollups (which still count them) are
 *   not counted twice.
 * - `checkLedger`: every rollup against the ledger it summarises, over the months not archived: each
 *   difference, and how many.
 *
 * Plain SQL through the ORM's connection, so it works the same on PostgreSQL and embedded PGlite.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { Database, Em } from '../db/orm.ts';

/** `YYYY-MM`. */
const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
const PARTITION = /^usage_ledger_(\d{4})_(\d{2})$/;
const CHUNK = 2000;

export interface ArchivedMonth {
  month: string;
  partition: string;
  file: string;
  rows: number;
}

/** A refusal the operator can act on, in English and Chinese (the CLI prints the terminal's language). */
export class LedgerArchiveError extends Error {
  override name = 'LedgerArchiveError';
  readonly messageZh: string;

  constructor(message: string, messageZh: string) {
    super(message);
    this.messageZh = messageZh;
  }
}

/** The monthly partitions there are now, oldest first. */
export async function ledgerPartitions(db: Database): Promise<{ partition: string; month: string }[]> {
  const rows = await db.orm.em.getConnection().execute<{ name: string }[]>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'usage_ledger'::regclass order by c.relname`,
    [],
    'all',
  );
  const months: { partition: string; month: string }[] = [];
  for (const { name } of rows) {
    const match = PARTITION.exec(name);
    if (match) months.push({ partition: name, month: `${match[1]}-${match[2]}` });
  }
  return months;
}

/** Archives every month wholly before `before` (`YYYY-MM`, not after the current month) into `dir`. */
export async function archiveLedger(db: Database, before: string, dir: string, now = new Date()): Promise<ArchivedMonth[]> {
  if (!MONTH.test(before)) throw new LedgerArchiveError(`--before must be a month, YYYY-MM (got ${JSON.stringify(before)})`, `--before 必须是月份 YYYY-MM（收到 ${JSON.stringify(before)}）`);
  const current = now.toISOString().slice(0, 7);
  if (before > current) throw new LedgerArchiveError(`--before ${before} is after the current month (${current}): only months already over can be archived`, `--before ${before} 晚于当前月份（${current}）：只能归档已经结束的月份`);
  mkdirSync(dir, { recursive: true });
  const done: ArchivedMonth[] = [];
  for (const { partition, month } of await ledgerPartitions(db)) {
    if (month >= before) continue;
    const file = resolve(dir, `${partition}.jsonl.gz`);
    const rows = await writePartition(db, partition, file);
    await db.orm.em.fork().transactional(async (tx) => {
      // No row may arrive between the file and the drop: the month is over, but a writer may still name it.
      await tx.execute(`lock table "${partition}" in access exclusive mode`);
      const [{ count } = { count: 0 }] = await tx.execute<{ count: string | number }[]>(`select count(*) as count from "${partition}"`, [], 'all');
      if (Number(count) !== rows) throw new LedgerArchiveError(`${partition} changed while it was written (${rows} rows written, ${count} now): nothing was dropped; run the archive again`, `${partition} 在写出期间发生了变化（写出 ${rows} 行，现在 ${count} 行）：未删除任何数据；请重新归档`);
      await tx.execute(`alter table usage_ledger detach partition "${partition}"`);
      await tx.execute(`delete from usage_ledger_request as r using "${partition}" as p where r.request_id = p.request_id`);
      await tx.execute(
        `insert into usage_ledger_archive (month, file, rows) values (?::date, ?, ?) on conflict (month) do update set file = excluded.file, rows = excluded.rows, archived_at = now()`,
        [`${month}-01`, file, rows],
      );
      await tx.execute(`drop table "${partition}"`);
    });
    done.push({ month, partition, file, rows });
  }
  return done;
}

/** The partition's rows as JSON lines, gzipped, by id; written beside the file and renamed once complete. */
async function writePartition(db: Database, partition: string, file: string): Promise<number> {
  const partial = `${file}.partial`;
  const gzip = createGzip();
  const written = pipeline(gzip, createWriteStream(partial));
  const connection = db.orm.em.getConnection();
  let rows = 0;
  let after = '0';
  for (;;) {
    const chunk = await connection.execute<{ id: string | number; line: string }[]>(
      `select id, row_to_json(l)::text as line from "${partition}" as l where id > ? order by id limit ${CHUNK}`,
      [after],
      'all',
    );
    if (chunk.length === 0) break;
    const text = `${chunk.map((row) => row.line).join('\n')}\n`;
    if (!gzip.write(text)) await once(gzip, 'drain');
    rows += chunk.length;
    after = String(chunk.at(-1)!.id);
  }
  gzip.end();
  await written;
  await rename(partial, file);
  return rows;
}

/** Puts an archived month back; returns its month and row count. */
export async function restoreLedger(db: Database, file: string): Promise<{ month: string; partition: string; rows: number }> {
  const fromName = PARTITION.exec(basename(file).replace(/\.jsonl(\.gz)?$/, ''));
  let month = fromName ? `${fromName[1]}-${fromName[2]}` : null;
  let rows = 0;
  await db.orm.em.fork().transactional(async (tx) => {
    let partition: string | null = null;
    let chunk: string[] = [];
    const flush = async () => {
      if (chunk.length === 0) return;
      if (!partition) {
        month ??= monthOf(chunk[0]!);
        partition = `usage_ledger_${month.replace('-', '_')}`;
        await tx.execute(`select usage_ledger_ensure_partition(?::timestamptz)`, [`${month}-01T00:00:00Z`]);
      }
      // Into the month's own table: the rows' own ids and times, and no second count in the rollups.
      await tx.execute(`insert into "${partition}" overriding system value select * from json_populate_recordset(null::usage_ledger, ?::json)`, [`[${chunk.join(',')}]`]);
      rows += chunk.length;
      chunk = [];
    };
    // Opened here, where it is read at once: lines a reader emits before its iterator exists are lost.
    const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.trim() === '') continue;
      chunk.push(line);
      if (chunk.length >= CHUNK) await flush();
    }
    await flush();
    if (!partition || !month) throw new LedgerArchiveError(`${file} holds no ledger rows`, `${file} 中没有账本记录`);
    await tx.execute(`insert into usage_ledger_request (request_id) select request_id from "${partition}"`);
    await tx.execute(`delete from usage_ledger_archive where month = ?::date`, [`${month}-01`]);
  }).catch((error: unknown) => {
    // A row (its id) or a turn (its turn id) the ledger holds already: the whole file is refused.
    if ((error as { code?: unknown }).code === '23505') throw new LedgerArchiveError(`${file}: its rows are in the ledger already (restored before?); nothing was restored`, `${file}：其中的记录已在账本中（之前恢复过？）；未恢复任何数据`);
    throw error;
  });
  return { month: month!, partition: `usage_ledger_${month!.replace('-', '_')}`, rows };
}

function monthOf(line: string): string {
  const createdAt = (JSON.parse(line) as { created_at?: unknown }).created_at;
  if (typeof createdAt !== 'string') throw new LedgerArchiveError('a row without created_at: not a ledger archive', '有一行没有 created_at：这不是账本归档文件');
  return new Date(createdAt).toISOString().slice(0, 7);
}

export interface LedgerDifference {
  /** `revenue_day`: the orders' daily revenue rollup against the orders (the dashboard's revenue). */
  rollup: 'hour' | 'day' | 'model_day' | 'revenue_day';
  /** The bucket: the UTC hour (ISO) or the local date. */
  bucket: string;
  payerId: string | null;
  /** The model; for `revenue_day` the kind (paid or refunded), whose figures are orders (`requests`) and minor units (`costMicros`). */
  model: string;
  status: string;
  currency: string;
  ledger: Figures | null;
  rolledUp: Figures | null;
}

interface Figures {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
}

export interface LedgerCheck {
  /** The rollups' time zone (days). */
  timezone: string;
  archivedMonths: string[];
  compared: Record<LedgerDifference['rollup'], number>;
  differences: LedgerDifference[];
}

/** Hours not in an archived month (the rollups keep archived months; the ledger does not). */
const HOUR_LIVE = `not exists (select 1 from usage_ledger_archive as a
  where b.bucket >= a.month::timestamp at time zone 'UTC' and b.bucket < (a.month + interval '1 month')::timestamp at time zone 'UTC')`;
/** Local days that touch no archived month. */
const DAY_LIVE = `not exists (select 1 from usage_ledger_archive as a
  where b.bucket::timestamp at time zone z.timezone < (a.month + interval '1 month')::timestamp at time zone 'UTC'
    and (b.bucket + 1)::timestamp at time zone z.timezone > a.month::timestamp at time zone 'UTC')`;

const FIGURES = `count(*) as requests, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_micros) as cost_micros`;

/**
 * One rollup against the ledger: both sides grouped on the rollup's key, joined in full, the rows that
 * differ. `from` and `to` (inclusive local dates; UTC dates for hours) bound it, or null for everything.
 */
function compareSql(rollup: Exclude<LedgerDifference['rollup'], 'revenue_day'>): string {
  const hour = rollup === 'hour';
  const bucketOfRow = hour ? `date_trunc('hour', created_at, 'UTC')` : `(created_at at time zone z.timezone)::date`;
  const key = rollup === 'model_day' ? ['model', 'status', 'currency'] : ['payer_id', 'model', 'status', 'currency'];
  const rollupBucket = hour ? 'hour' : 'day';
  const table = rollup === 'hour' ? 'usage_rollup_hour' : rollup === 'day' ? 'usage_rollup_day' : 'usage_rollup_model_day';
  // Bounds: hours by UTC date, days by local date; the ledger read by its partition key either way.
  const lo = hour ? `?::date::timestamp at time zone 'UTC'` : `?::date::timestamp at time zone z.timezone`;
  const hi = hour ? `(?::date + 1)::timestamp at time zone 'UTC'` : `(?::date + 1)::timestamp at time zone z.timezone`;
  const sql = `with z as (select timezone from usage_rollup_zone),
    l as (select ${bucketOfRow} as bucket, ${key.join(', ')}, ${FIGURES}
            from usage_ledger, z
           where created_at >= coalesce(${lo}, '-infinity') and created_at < coalesce(${hi}, 'infinity')
           group by 1, ${key.map((_, i) => i + 2).join(', ')}),
    r as (select ${rollupBucket} as bucket, ${key.join(', ')}, requests, input_tokens, output_tokens, cost_micros from ${table}
           where ${hour ? `hour >= coalesce(${lo}, '-infinity') and hour < coalesce(${hi}, 'infinity')` : `day >= coalesce(?::date, '-infinity') and day <= coalesce(?::date, 'infinity')`})
    select ${hour ? `to_char(b.bucket at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"')` : `to_char(b.bucket, 'YYYY-MM-DD')`} as bucket,
           ${rollup === 'model_day' ? 'null' : 'b.payer_id'} as payer_id, b.model, b.status, b.currency,
           l.requests as l_requests, l.input_tokens as l_input, l.output_tokens as l_output, l.cost_micros as l_cost,
           r.requests as r_requests, r.input_tokens as r_input, r.output_tokens as r_output, r.cost_micros as r_cost
      from (select bucket, ${key.join(', ')} from l union select bucket, ${key.join(', ')} from r) as b
      cross join z
      left join l on l.bucket = b.bucket and ${key.map((k) => `l.${k} = b.${k}`).join(' and ')}
      left join r on r.bucket = b.bucket and ${key.map((k) => `r.${k} = b.${k}`).join(' and ')}
     where ${hour ? HOUR_LIVE : DAY_LIVE}
     order by 1, 2, 3, 4, 5`;
  return sql;
}

/**
 * The daily revenue rollup (\`billing_revenue_day\`, Migration20261210060000_revenue_rollup) against the
 * orders, in the CompareRow shape: kind as model, orders as requests, minor units as cost. Orders are never
 * archived, so every day counts. Bounds as above (local dates, inclusive, or null).
 */
const REVENUE_COMPARE_SQL = `with z as (select timezone from usage_rollup_zone),
    o as (select day, currency, kind, count(*) as orders, sum(amount_minor) as amount from (
            select (paid_at at time zone z.timezone)::date as day, currency, 'paid' as kind, amount_minor from billing_order, z where paid_at is not null
            union all
            select (refunded_at at time zone z.timezone)::date, currency, 'refunded', amount_minor from billing_order, z where refunded_at is not null
          ) as events
           where day >= coalesce(?::date, '-infinity') and day <= coalesce(?::date, 'infinity')
           group by 1, 2, 3),
    r as (select day, currency, kind, orders, amount_minor as amount from billing_revenue_day
           where day >= coalesce(?::date, '-infinity') and day <= coalesce(?::date, 'infinity'))
    select to_char(b.day, 'YYYY-MM-DD') as bucket, null as payer_id, b.kind as model, '' as status, b.currency,
           o.orders as l_requests, 0 as l_input, 0 as l_output, o.amount as l_cost,
           r.orders as r_requests, 0 as r_input, 0 as r_output, r.amount as r_cost
      from (select day, currency, kind from o union select day, currency, kind from r) as b
      left join o on o.day = b.day and o.currency = b.currency and o.kind = b.kind
      left join r on r.day = b.day and r.currency = b.currency and r.kind = b.kind
     order by 1, 3, 5`;

interface CompareRow {
  bucket: string;
  payer_id: string | null;
  model: string;
  status: string;
  currency: string;
  l_requests: string | number | null;
  l_input: string | number | null;
  l_output: string | number | null;
  l_cost: string | number | null;
  r_requests: string | number | null;
  r_input: string | number | null;
  r_output: string | number | null;
  r_cost: string | number | null;
}

/** Compares every rollup with the ledger between `from` and `to` (YYYY-MM-DD, inclusive; null: unbounded). */
export async function checkLedger(db: Database, range: { from: string | null; to: string | null } = { from: null, to: null }): Promise<LedgerCheck> {
  for (const [flag, value] of Object.entries(range)) {
    if (value !== null && !/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new LedgerArchiveError(`--${flag} must be a date, YYYY-MM-DD (got ${JSON.stringify(value)})`, `--${flag} 必须是日期 YYYY-MM-DD（收到 ${JSON.stringify(value)}）`);
  }
  const em: Em = db.orm.em.fork();
  const [zone] = await em.execute<{ timezone: string }[]>('select timezone from usage_rollup_zone', [], 'all');
  const archived = await em.execute<{ month: string }[]>(`select to_char(month, 'YYYY-MM') as month from usage_ledger_archive order by month`, [], 'all');
  const compared = { hour: 0, day: 0, model_day: 0, revenue_day: 0 };
  const differences: LedgerDifference[] = [];
  for (const rollup of ['hour', 'day', 'model_day', 'revenue_day'] as const) {
    const rows = await em.execute<CompareRow[]>(rollup === 'revenue_day' ? REVENUE_COMPARE_SQL : compareSql(rollup), [range.from, range.to, range.from, range.to], 'all');
    compared[rollup] = rows.length;
    for (const row of rows) {
      const ledger = figures(row.l_requests, row.l_input, row.l_output, row.l_cost);
      const rolledUp = figures(row.r_requests, row.r_input, row.r_output, row.r_cost);
      if (ledger && rolledUp && sameFigures(ledger, rolledUp)) continue;
      differences.push({ rollup, bucket: row.bucket, payerId: row.payer_id, model: row.model, status: row.status, currency: row.currency.trim(), ledger, rolledUp });
    }
  }
  return { timezone: zone?.timezone ?? 'UTC', archivedMonths: archived.map((row) => row.month), compared, differences };
}

function figures(requests: string | number | null, input: string | number | null, output: string | number | null, cost: string | number | null): Figures | null {
  if (requests === null) return null;
  return { requests: Number(requests), inputTokens: Number(input), outputTokens: Number(output), costMicros: Number(cost) };
}

function sameFigures(a: Figures, b: Figures): boolean {
  return a.requests === b.requests && a.inputTokens === b.inputTokens && a.outputTokens === b.outputTokens && a.costMicros === b.costMicros;
}

/** The default archive directory, under the data directory. */
export function defaultArchiveDir(dataDir: string): string {
  return join(resolve(dataDir), 'archive');
}

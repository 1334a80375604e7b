/**
 * The data-at-scale loader (`npm run bench:data`, issue 50 item 1): a database of its own, migrated by svc's
 * own migrations, filled server-side with `insert … select generate_series(…)` — no rows cross the wire, so a
 * full load (1,000,000 accounts, 20,000,000 ledger rows) takes minutes. Secondary indexes are dropped for the
 * bulk insert and built once afterwards, then every table is vacuumed and analysed, as a database that has
 * lived with autovacuum would be.
 *
 * Ids are derived from row numbers (`md5('acct:' || n)::uuid`), so the measuring side can name the busiest
 * account, an organisation's owner or a known order without asking the database which is which.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';

/** How many rows of each kind a scale of 1 loads (the issue's sizes). */
export const FULL = {
  accounts: 1_000_000,
  organisations: 20_000,
  applications: 50_000,
  orders: 500_000,
  ledger: 20_000_000,
  audit: 1_000_000,
} as const;

export type Sizes = { [K in keyof typeof FULL]: number };

/** The sizes at `scale` (0.001 … 1); never so small that a kind of row is missing. */
export function sizesAt(scale: number): Sizes {
  const at = (n: number, min: number) => Math.max(min, Math.round(n * scale));
  const organisations = at(FULL.organisations, 10);
  return {
    accounts: at(FULL.accounts, 500),
    organisations,
    // Every organisation came from an approved application; the rest are pending, rejected or withdrawn.
    applications: Math.max(at(FULL.applications, 40), organisations + 30),
    orders: at(FULL.orders, 200),
    ledger: at(FULL.ledger, 10_000),
    audit: at(FULL.audit, 500),
  };
}

/** How many person accounts are staff (the first ones: 5 admins, the rest support). */
export const STAFF = 20;
/** The busiest accounts (person numbers `STAFF + 1 … STAFF + BUSY`): together 30 % of the ledger. */
export const BUSY = 100;
/** How far back the ledger, orders and audit log go. */
export const MONTHS = 13;

/** The uuid the loader gave person account `n` (1-based), organisation `n`, or application `n`. */
export const ids = {
  account: (n: number) => md5uuid(`acct:${n}`),
  organisation: (n: number) => md5uuid(`org:${n}`),
  application: (n: number) => md5uuid(`app:${n}`),
};

function md5uuid(text: string): string {
  const h = createHash('md5').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** SQL fragments shared by the steps: a uuid from a tag and a row number, as `ids` computes it in JS. */
const uuid = (tag: string, n: string) => `md5('${tag}:' || (${n}))::uuid`;

export interface LoadOptions {
  /** postgres://… of the server; the database `database` on it is dropped and made again. */
  adminUrl: string;
  database: string;
  scale: number;
  /** Runs svc's migrations against the new database (the caller knows how to start svc's code). */
  migrate: (databaseUrl: string) => Promise<void>;
  log?: (line: string) => void;
}

export interface LoadResult {
  databaseUrl: string;
  sizes: Sizes;
  /** Seconds per step. */
  seconds: Record<string, number>;
  counts: Record<string, number>;
}

export function databaseUrlOf(adminUrl: string, database: string): string {
  return Object.assign(new URL(adminUrl), { pathname: `/${database}` }).toString();
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  if (!/^[a-z_][a-z0-9_]*$/.test(options.database)) throw new Error(`database name ${options.database} must be lower-case letters, digits and _`);
  const admin = new pg.Client({ connectionString: options.adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${options.database}" with (force)`);
    await admin.query(`create database "${options.database}"`);
  } finally {
    await admin.end();
  }
  const databaseUrl = databaseUrlOf(options.adminUrl, options.database);
  const seconds: Record<string, number> = {};
  const timed = async (name: string, work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    seconds[name] = Math.round((performance.now() - started) / 100) / 10;
    log(`  ${name}: ${seconds[name]} s`);
  };
  await timed('migrate', () => options.migrate(databaseUrl));
  const sizes = sizesAt(options.scale);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    // A bulk load: nothing here needs to survive a crash, and index builds may take memory. The rows are
    // consistent by construction, so foreign-key triggers are skipped (replica role; needs a superuser).
    await db.query(`set synchronous_commit = off; set maintenance_work_mem = '512MB'; set work_mem = '64MB'; set session_replication_role = replica`);
    const tables = ['account', 'organisation', 'organisation_member', 'api_key', 'organisation_connection', 'enterprise_application', 'enterprise_application_event', 'billing_order', 'usage_ledger', 'audit_log'];
    const rebuild = await dropSecondaryIndexes(db, tables);
    log(`loading at scale ${options.scale}: ${Object.entries(sizes).map(([k, v]) => `${v.toLocaleString('en')} ${k}`).join(', ')}`);
    for (const [name, sql] of steps(sizes)) await timed(name, () => db.query(sql));
    await timed('ledger', () => loadLedger(db, sizes, log));
    await timed('indexes', async () => {
      for (const statement of rebuild) await db.query(statement);
    });
    await timed('vacuum analyze', async () => {
      for (const table of tables) await db.query(`vacuum (analyze) "${table}"`);
    });
    await timed('after load', () => afterLoad(db, sizes));
    const counts: Record<string, number> = {};
    for (const table of tables) counts[table] = Number((await db.query<{ n: string }>(`select count(*) as n from "${table}"`)).rows[0]!.n);
    return { databaseUrl, sizes, seconds, counts };
  } finally {
    await db.end();
  }
}

/**
 * SQL that derives data from the loaded rows, run after indexes are built and tables analysed: the load
 * ran as `session_replication_role = replica`, so the ledger's statement trigger did not keep its turn ids
 * and rollups (Migration20261209010000_ledger_partitions), nor the orders' row trigger the daily revenue
 * (Migration20261210060000_revenue_rollup); they are filled from the rows in one pass.
 */
export async function afterLoad(db: pg.Client, sizes: Sizes): Promise<void> {
  void sizes;
  await db.query('select usage_ledger_rebuild_rollups()');
  await db.query('select billing_revenue_rebuild()');
  await db.query('vacuum (analyze) usage_ledger_request, usage_rollup_hour, usage_rollup_day, usage_rollup_model_day, billing_revenue_day');
}

/**
 * Drops the loaded tables' indexes that no constraint owns (a bulk insert into a table without them is several
 * times faster) and returns the statements that make them again. Constraint indexes (primary keys, unique
 * constraints) stay: foreign keys and `on conflict` depend on them.
 */
async function dropSecondaryIndexes(db: pg.Client, tables: string[]): Promise<string[]> {
  const { rows } = await db.query<{ name: string; def: string }>(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def
       from pg_index i
       join pg_class t on t.oid = i.indrelid
      where t.relname = any($1) and t.relnamespace = 'public'::regnamespace
        and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)
        and not exists (select 1 from pg_inherits h where h.inhrelid = i.indexrelid)`,
    [tables],
  );
  for (const row of rows) await db.query(`drop index if exists ${row.name}`);
  // A partitioned table's index reads back as `… ON ONLY <table>`, which would make the parent's index alone,
  // without one on any partition: made again as a plain `ON`, it is built on every partition.
  return rows.map((row) => row.def.replace(/ ON ONLY /, ' ON '));
}

/**
 * Names, words and places the rows are made of. Emails are first.last<n>@domain with a few big mail
 * providers and a long tail of company domains; organisation names are two words and a legal form.
 */
const FIRST = ['li', 'wang', 'zhang', 'liu', 'chen', 'yang', 'anna', 'james', 'maria', 'david', 'sofia', 'lucas', 'emma', 'noah', 'mia', 'yuki', 'arjun', 'fatima', 'olga', 'pierre'];
const LAST = ['smith', 'garcia', 'mueller', 'rossi', 'kim', 'nguyen', 'silva', 'khan', 'ivanova', 'dubois', 'tanaka', 'lopez', 'brown', 'jones', 'wei', 'hua', 'ming', 'lin', 'zhao', 'sun'];
const PROVIDERS = ['gmail.com', 'qq.com', '163.com', 'outlook.com', 'yahoo.com', 'icloud.com', 'proton.me', 'foxmail.com'];
const WORDS = ['Northwind', 'Bluebird', 'Cedar', 'Granite', 'Lumen', 'Harbor', 'Quantum', 'Silver', 'Summit', 'Vertex', 'Orchid', 'Pioneer', 'Maple', 'Nimbus', 'Atlas', 'Crimson', 'Delta', 'Ember', 'Falcon', 'Jade'];
const TRADES = ['Analytics', 'Robotics', 'Health', 'Logistics', 'Media', 'Labs', 'Software', 'Bank', 'Energy', 'Learning'];
const FORMS = ['Ltd', 'GmbH', 'Inc', 'Co', 'SAS', 'KK', 'BV', 'Group'];
const MODELS: [string, string][] = [
  ['svc-2.1-fast', 'fast'],
  ['svc-2.1-fast', 'fast'],
  ['svc-2.1-fast', 'fast'],
  ['svc-2.1', 'premium'],
  ['svc-2.1-pro', 'premium'],
];
const arr = (values: string[]) => `array[${values.map((v) => `'${v}'`).join(',')}]`;
/** `pick(list, expr)`: the element of `list` at `expr` (an integer expression) modulo its length. */
const pick = (values: string[], expr: string) => `(${arr(values)})[1 + ((${expr}) % ${values.length})::int]`;

function steps(s: Sizes): [string, string][] {
  const span = `interval '${MONTHS * 30 + 5} days'`;
  const orgAccount = uuid('org', 'o');
  return [
    [
      'accounts',
      // Persons: the first STAFF are staff; emails on big providers for 60 %, else on one of N/20 company
      // domains; sign-ups grow over time (more recent than old).
      `insert into account (id, created_at, updated_at, email, display_name, role, plan_package, email_verified_at, locale, kind)
       select ${uuid('acct', 'n')}, c, c,
              ${pick(FIRST, 'n * 7')} || '.' || ${pick(LAST, 'n / 20')} || n || '@' ||
                case when n % 5 < 3 then ${pick(PROVIDERS, 'n / 3')} else ${pick(WORDS, 'n / 11').toLowerCase()} || '-' || (n % ${Math.max(1, Math.round(s.accounts / 20))}) || '.com' end,
              case when n % 4 = 0 then null else initcap(${pick(FIRST, 'n * 7')}) || ' ' || initcap(${pick(LAST, 'n / 20')}) end,
              case when n <= 5 then 'admin' when n <= ${STAFF} then 'support' else 'member' end,
              case when n % 50 = 0 then 'max_x5' when n % 200 = 1 then 'max_x20' when n % 10 = 3 then 'pro' else 'free' end,
              c + interval '3 minutes', case when n % 3 = 0 then 'zh-CN' else 'en' end, 'person'
         from generate_series(1::bigint, ${s.accounts}) n, lateral (select now() - ${span} * (1 - sqrt(((n * 7919) % 100003) / 100003.0)) as c) t`,
    ],
    [
      'organisations',
      `insert into account (id, created_at, updated_at, email, display_name, role, plan_package, kind)
       select ${orgAccount}, now() - ${span} * ((o * 31 % 997) / 997.0), now(), 'org-' || ${orgAccount} || '@organisations.invalid',
              ${orgName('o')}, 'member', 'enterprise', 'organisation'
         from generate_series(1::bigint, ${s.organisations}) o;
       insert into organisation (id, created_at, updated_at, name, name_key, application_id)
       select ${orgAccount}, a.created_at, a.created_at, ${orgName('o')}, lower(${orgName('o')}), ${uuid('app', 'o')}
         from generate_series(1::bigint, ${s.organisations}) o join account a on a.id = ${orgAccount};
       -- The owner applied (person STAFF + BUSY + o); two more people are members.
       insert into organisation_member (id, created_at, updated_at, organisation_id, account_id, role)
       select ${uuid('om', 'o * 3 + r')}, now(), now(), ${orgAccount}, ${uuid('acct', `case r when 0 then ${STAFF + BUSY} + o else ${STAFF + BUSY + s.organisations} + o * 2 + r end`)},
              case r when 0 then 'owner' when 1 then 'admin' else 'member' end
         from generate_series(1::bigint, ${s.organisations}) o, generate_series(0, 2) r`,
    ],
    [
      'keys and connecting IPs',
      // A third of people have a personal key (some two); every organisation three enterprise keys, each seen
      // from a handful of addresses.
      `insert into api_key (id, created_at, updated_at, account_id, kind, name, token_hash, prefix, last4, last_used_at, revoked_at)
       select ${uuid('key', 'n * 2 + r')}, a.created_at + interval '1 day', now(), a.id, 'personal', case r when 0 then 'laptop' else 'ci' end,
              encode(sha256(('key:' || (n * 2 + r))::bytea), 'hex'), 'svc_live_' || substr(md5('k' || (n * 2 + r)), 1, 3), right(md5('l' || (n * 2 + r)), 4),
              case when n % 7 = 0 then null else now() - interval '1 hour' * (n % 2000) end,
              case when n % 13 = 0 and r = 1 then now() - interval '5 days' end
         from generate_series(1::bigint, ${s.accounts}) n, generate_series(0, 1) r, lateral (select id, created_at from account where id = ${uuid('acct', 'n')}) a
        where n % 3 = 0 and (r = 0 or n % 9 = 0);
       insert into api_key (id, created_at, updated_at, account_id, kind, name, token_hash, prefix, last4, last_used_at, created_by)
       select ${uuid('ekey', 'o * 3 + r')}, now() - interval '200 days', now(), ${orgAccount}, 'enterprise', 'production ' || r,
              encode(sha256(('ekey:' || (o * 3 + r))::bytea), 'hex'), 'svc_ent_' || substr(md5('e' || (o * 3 + r)), 1, 4), right(md5('m' || (o * 3 + r)), 4),
              now() - interval '1 minute' * (o % 500), ${uuid('acct', `${STAFF + BUSY} + o`)}
         from generate_series(1::bigint, ${s.organisations}) o, generate_series(0, 2) r;
       insert into organisation_connection (key_id, ip, organisation_id, first_seen_at, last_seen_at, request_count)
       select ${uuid('ekey', 'o * 3 + r')}, case when i % 4 = 0 then '2001:db8:' || to_hex(o) || '::' || i else (11 + o % 200) || '.' || (o / 200 % 250) || '.' || r || '.' || (i * 17 % 250 + 1) end,
              ${orgAccount}, now() - interval '1 day' * (i * 9 % 190 + 10), now() - interval '1 minute' * ((o * 3 + r + i) % 20000), 1 + (o * i * 37) % 50000
         from generate_series(1::bigint, ${s.organisations}) o, generate_series(0, 2) r, generate_series(1, 1 + (o + r) % 9) i`,
    ],
    [
      'applications',
      // 1 … organisations: approved (each made its organisation); the rest rejected, withdrawn, or waiting in
      // the review queue (1 in 25). Each application is a different person's.
      `insert into enterprise_application (id, created_at, updated_at, account_id, kind, organisation, organisation_key, contact_email, website, country,
                                           use_case, expected_monthly_tokens, state, auto_approved, organisation_id, package_id, decided_by, decided_at, decision_note)
       select ${uuid('app', 'k')}, c, c, ${uuid('acct', `${STAFF + BUSY} + k`)}, case when k % 3 = 0 then 'enterprise' else 'commercial' end,
              ${orgName('k')}, lower(${orgName('k')}), 'ops' || k || '@' || lower(${pick(WORDS, 'k')}) || '-' || k || '.com',
              case when k % 2 = 0 then 'https://' || lower(${pick(WORDS, 'k')}) || k || '.example' end, ${pick(['CN', 'US', 'DE', 'JP', 'SG', 'GB', 'FR', 'BR'], 'k')},
              'Customer support assistant and document search for our ' || lower(${pick(TRADES, 'k / 20')}) || ' team.', 1000000 * (1 + k % 500),
              st, k % 10 = 0 and st = 'approved', case when k <= ${s.organisations} then ${uuid('org', 'k')} end,
              case when st = 'approved' then 'enterprise' end,
              case when st in ('approved', 'rejected') and not (k % 10 = 0 and st = 'approved') then ${uuid('acct', '1 + k % 5')} end,
              case when st <> 'pending_review' then c + interval '1 hour' * (1 + k % 72) end,
              case when st = 'rejected' then 'Not a business use.' end
         from generate_series(1::bigint, ${s.applications}) k,
              lateral (select now() - ${span} * ((k * 7 % 1009) / 1009.0) as c,
                              case when k <= ${s.organisations} then 'approved' when k % 25 = 0 then 'pending_review' when k % 3 = 0 then 'withdrawn' else 'rejected' end as st) t;
       -- The timeline: submitted, then the decision (staff's, the system's auto-approval, or the applicant withdrawing).
       insert into enterprise_application_event (id, created_at, updated_at, application_id, actor_id, actor_kind, action, note)
       select ${uuid('ev', 'k * 2')}, a.created_at, a.created_at, a.id, a.account_id, 'applicant', 'submitted', null
         from generate_series(1::bigint, ${s.applications}) k join enterprise_application a on a.id = ${uuid('app', 'k')};
       insert into enterprise_application_event (id, created_at, updated_at, application_id, actor_id, actor_kind, action, note)
       select ${uuid('ev', 'k * 2 + 1')}, a.decided_at, a.decided_at, a.id,
              case when a.state = 'withdrawn' then a.account_id else a.decided_by end,
              case when a.state = 'withdrawn' then 'applicant' when a.auto_approved then 'system' else 'staff' end,
              a.state, a.decision_note
         from generate_series(1::bigint, ${s.applications}) k join enterprise_application a on a.id = ${uuid('app', 'k')}
        where a.state <> 'pending_review'`,
    ],
    [
      'orders',
      // Payers skewed towards the busy end; most orders paid, some expired or still open, a few refunded.
      `insert into billing_order (id, created_at, updated_at, account_id, package_id, provider, amount_minor, list_minor, currency, state,
                                  provider_trade_no, expires_at, paid_at, closed_at, refunded_at, placed_by)
       select 'svc' || substr(translate(encode(sha256(('order:' || i)::bytea), 'base64'), '+/=', 'xYz'), 1, 24), c, c, payer,
              pkg, prov, amount, amount, cur, st,
              case when st in ('paid', 'refunded') then case prov when 'alipay' then '2026' || lpad(i::text, 24, '0') when 'wechat' then '4200' || lpad(i::text, 24, '0') else 'pi_' || md5('pi' || i) end end,
              c + interval '15 minutes', case when st in ('paid', 'refunded') then c + interval '40 seconds' end,
              case when st = 'expired' then c + interval '15 minutes' end, case when st = 'refunded' then c + interval '3 days' end, payer
         from generate_series(1::bigint, ${s.orders}) i,
              lateral (select now() - ${span} * (1 - sqrt(((i * 7919) % 100003) / 100003.0)) as c,
                              ${uuid('acct', `${STAFF} + 1 + floor(${s.accounts - STAFF - 1} * power(((i * 104729) % 1000003) / 1000003.0, 2))::int`)} as payer,
                              ${pick(['pro', 'pro', 'pro', 'max_x5', 'max_x20'], 'i')} as pkg,
                              ${pick(['alipay', 'wechat', 'wechat', 'stripe', 'alipay'], 'i / 5')} as prov,
                              case when i % 5 in (0, 2) then 'USD' else 'CNY' end as cur,
                              case when i % 97 = 0 then 'refunded' when i % 11 = 0 then 'expired' when i % 53 = 0 then 'created' when i % 71 = 0 then 'failed' else 'paid' end as st) t,
              lateral (select case when cur = 'USD' then case pkg when 'pro' then 900 when 'max_x5' then 1900 else 3900 end
                                   else case pkg when 'pro' then 6500 when 'max_x5' then 13800 else 28300 end end as amount) m`,
    ],
    [
      'audit log',
      // Staff actions over the year: mostly orders and subscriptions (the system), some staff decisions.
      `insert into audit_log (at, actor_id, action, target_type, target_id, before, after, reason, request_id)
       select now() - ${span} * (1 - (j::float8 / ${s.audit})), case when j % 4 = 0 then ${uuid('acct', '1 + j % ' + STAFF)} end,
              act, case when act like 'order:%' then 'order' when act like 'application:%' then 'application' when act = 'api-key:revoke-any' then 'api_key' else 'account' end,
              case when act like 'order:%' then 'svc' || substr(md5('o' || j), 1, 24) when act like 'application:%' then ${uuid('app', `1 + j % ${s.applications}`)}::text
                   else ${uuid('acct', `${STAFF} + 1 + (j * 7919) % ${s.accounts - STAFF}`)}::text end,
              '{"planPackage": "free"}'::jsonb, '{"planPackage": "pro"}'::jsonb, case when j % 4 = 0 then 'Support ticket #' || (10000 + j) end, 'mbr_' || substr(md5('audit' || j), 1, 26)
         from generate_series(1::bigint, ${s.audit}) j,
              lateral (select ${pick(['order:create', 'order:paid', 'order:expire', 'subscription:start', 'subscription:renew', 'order:create', 'order:paid', 'account:set-package', 'subscription:expire', 'account:disable', 'application:approve', 'application:reject', 'api-key:revoke-any', 'session:end-any'], 'j')} as act) t`,
    ],
  ];
}

function orgName(n: string): string {
  return `${pick(WORDS, n)} || ' ' || ${pick(WORDS, `${n} / 20`)} || ' ' || ${pick(TRADES, `${n} / 400`)} || ' ' || ${pick(FORMS, `${n} / 7`)} || ' ' || ${n}`;
}

/**
 * 13 months of turns, most of them recent (traffic grows). Who: 30 % the BUSY accounts, 20 % organisations
 * (a member's request, paid by the organisation), the rest spread over everyone with a long tail — most
 * people make a handful of requests a month. Inserted in chunks so progress shows.
 */
async function loadLedger(db: pg.Client, s: Sizes, log: (line: string) => void): Promise<void> {
  const chunk = 1_000_000;
  const span = `interval '${MONTHS * 30} days'`;
  // The ledger is partitioned by month and the server makes only this month and the next two: the loaded
  // months get theirs first, or their rows would all wait in the default partition.
  await db.query(`select usage_ledger_ensure_partition(now() - make_interval(months => m)) from generate_series(1, ${MONTHS + 1}) as m`);
  for (let from = 1; from <= s.ledger; from += chunk) {
    const to = Math.min(s.ledger, from + chunk - 1);
    await db.query(
      `insert into usage_ledger (request_id, account_id, credential_kind, credential_id, channel, model, routed_model, class, stream, input_tokens, output_tokens,
                                 estimated, cost_micros, reserved_micros, currency, status, upstream_status, latency_ms, created_at, client_request_id,
                                 payer_kind, payer_id, product, client_ip, error_code, error_stage)
       select 'mbr_' || substr(md5(i::text), 1, 26), who.account, case when who.org then 'enterprise_key' when i % 10 = 0 then 'web_session' else 'api_key' end,
              who.credential, case when who.org then 'enterprise' when i % 10 = 0 then 'web' else 'api' end,
              m.model, m.model, m.class, i % 3 <> 0, 200 + (i * 7) % 6000, 50 + (i * 13) % 1500, i % 500 = 0,
              ((200 + (i * 7) % 6000) * case m.class when 'fast' then 140 else 435 end + (50 + (i * 13) % 1500) * case m.class when 'fast' then 280 else 870 end) / 1000,
              4096 * case m.class when 'fast' then 280 else 870 end / 1000, 'USD',
              case when i % 400 = 0 then 'upstream_failed' when i % 150 = 0 then 'client_disconnected' when i % 1000 = 0 then 'refunded' else 'ok' end,
              case when i % 400 = 0 then 502 else 200 end, 300 + (i * 31) % 9000,
              now() - ${span} * (1 - sqrt(((i * 7919) % 1000003) / 1000003.0)) - interval '1 second' * (i % 3600),
              case when i % 20 = 0 then 'client-' || md5('c' || i) end,
              case when who.org then 'organisation' else 'account' end, who.payer, case when i % 50 = 0 then 'search' else 'chat' end,
              case when who.org then '11.' || (i % 250) || '.0.' || (i % 200 + 1) else '100.' || (i % 64) || '.' || (i / 64 % 250) || '.' || (i % 251) end,
              case when i % 400 = 0 then 'upstream_error' end, case when i % 400 = 0 then 'upstream' end
         from generate_series(${from}::bigint, ${to}) i,
              lateral (select (${arr(MODELS.map(([m]) => m))})[1 + (i % ${MODELS.length})::int] as model, (${arr(MODELS.map(([, c]) => c))})[1 + (i % ${MODELS.length})::int] as class) m,
              lateral (select case when i % 10 < 3 then ${STAFF} + 1 + (i * 7) % ${BUSY}
                                   else ${STAFF} + 1 + floor(${s.accounts - STAFF - 1} * power(((i * 104729) % 1000003) / 1000003.0, 3))::int end as person,
                              (i % 10 in (3, 4)) as org, 1 + (i * 31) % ${s.organisations} as o) p,
              lateral (select case when p.org then ${uuid('acct', `case (i / 10) % 3 when 0 then ${STAFF + BUSY} + p.o else ${STAFF + BUSY + s.organisations} + p.o * 2 + (i / 10) % 3 end`)} else ${uuid('acct', 'p.person')} end as account,
                              case when p.org then ${uuid('org', 'p.o')} else ${uuid('acct', 'p.person')} end as payer,
                              case when p.org then ${uuid('ekey', 'p.o * 3 + i % 3')}::text else ${uuid('key', 'p.person * 2')}::text end as credential, p.org) who`,
    );
    log(`    ledger ${to.toLocaleString('en')} / ${s.ledger.toLocaleString('en')}`);
  }
}

/**
 * Staff search stays fast at a million accounts because every lookup it makes is an index range scan or a
 * key lookup (Migration20261208010000). This fills a database with enough accounts, organisations, keys,
 * ledger rows and orders that the planner prefers an index wherever one serves (100,000 accounts by
 * default; `SEARCH_PLAN_ACCOUNTS=1000000` for the full size), then EXPLAINs exactly the service's own SQL
 * texts: each must use its index and read no table from end to end. Timings are printed for the record.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../server/authz/principal.ts';
import { accountsMatch, emailMatch, likeEscape } from '../../../server/modules/staff/account-match.ts';
import { SEARCH_LIMIT, SEARCH_SQL } from '../../../server/modules/staff/staff-search.service.ts';
import { accountListSql } from '../../../server/modules/staff/staff.service.ts';
import { REQUEST_BY_ID_SQL } from '../../../server/modules/usage/usage.history.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';

const accounts = Number(process.env.SEARCH_PLAN_ACCOUNTS ?? 100_000);
const keys = accounts;
const organisations = Math.round(accounts / 20);
const ledgerRows = accounts;
const orders = Math.round(accounts / 10);

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
  await client.query(
    `insert into account (id, created_at, updated_at, email, role, plan_package, kind)
     select ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, now() - g * interval '1 minute', now(),
            case when g <= $2 then 'org-' || g || '@organisations.invalid' else 'user' || g || '@' || (array['example.com', 'corp.example', 'mail.example', 'acme' || (g % 500) || '.example'])[1 + g % 4] end,
            'member', 'free', case when g <= $2 then 'organisation' else 'person' end
       from generate_series(1, $1::int) as g`,
    [accounts, organisations],
  );
  await client.query(
    `insert into organisation (id, created_at, updated_at, name, name_key)
     select ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, now(), now(), 'Company ' || g, 'company ' || g
       from generate_series(1, $1::int) as g`,
    [organisations],
  );
  await client.query(
    `insert into api_key (id, created_at, updated_at, account_id, kind, name, token_hash, prefix, last4)
     select gen_random_uuid(), now(), now(), ('00000000-0000-4000-8000-' || lpad((1 + g % $1)::text, 12, '0'))::uuid, 'personal', 'key ' || g,
            encode(sha256(g::text::bytea), 'hex'), 'svc_live_' || substr(md5(g::text), 1, 3), substr(md5(g::text), 5, 4)
       from generate_series(1, $2::int) as g`,
    [accounts, keys],
  );
  await client.query(
    `insert into usage_ledger (request_id, client_request_id, account_id, payer_id, credential_kind, credential_id, channel, model, routed_model, class, stream,
       input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, latency_ms, created_at)
     select 'mbr_gen' || lpad(g::text, 8, '0'), case when g % 10 = 0 then 'mbr_client' || lpad(g::text, 8, '0') end, x.payer, x.payer, 'api_key', 'k', 'api', 'auto', 'svc-2.1-fast', 'fast', false,
            10, 20, false, 30, 30, 'USD', 'ok', 100, now() - g * interval '1 second'
       from generate_series(1, $1::int) as g, lateral (select ('00000000-0000-4000-8000-' || lpad((1 + g % $2)::text, 12, '0'))::uuid as payer) as x`,
    [ledgerRows, accounts],
  );
  await client.query(
    `insert into billing_order (id, created_at, updated_at, account_id, package_id, provider, amount_minor, list_minor, currency, state, expires_at, provider_trade_no)
     select 'svcgen' || lpad(g::text, 21, '0'), now(), now(), ('00000000-0000-4000-8000-' || lpad((1 + g % $2)::text, 12, '0'))::uuid, 'pro',
            (array['alipay', 'wechat', 'stripe', 'sandbox'])[1 + g % 4], 900, 900, 'USD', 'paid', now(), '2026' || lpad(g::text, 24, '0')
       from generate_series(1, $1::int) as g`,
    [orders, accounts],
  );
  await client.query(
    `insert into enterprise_application (id, created_at, updated_at, account_id, kind, organisation, organisation_key, contact_email, country, use_case, expected_monthly_tokens, state)
     select ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid, now(), now(), ('00000000-0000-4000-8000-' || lpad((1 + g % $2)::text, 12, '0'))::uuid,
            'enterprise', 'Applicant ' || g, 'applicant ' || g, 'ops@example.com', 'DE', 'Support drafts.', 1000000, 'rejected'
       from generate_series(1, $1::int) as g`,
    [organisations, accounts],
  );
  for (const table of ['account', 'organisation', 'api_key', 'usage_ledger', 'billing_order', 'enterprise_application']) await client.query(`vacuum analyze ${table}`);
  console.log(`search plan: ${accounts.toLocaleString('en')} accounts, ${keys.toLocaleString('en')} keys, ${ledgerRows.toLocaleString('en')} ledger rows generated in ${Math.round(performance.now() - started)} ms`);
}, 600_000);

afterAll(async () => {
  await client?.end();
  await app?.close();
  await setup?.cleanup();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** `?` placeholders (as MikroORM takes them) as `$n` for pg. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Empty tables (months of the ledger with no rows yet), and each partition's index → its parent index. */
async function partitions(): Promise<{ empty: Set<string>; parentOf: Map<string, string> }> {
  const empty = await client.query<{ relname: string }>(`select relname from pg_class where relkind = 'r' and pg_relation_size(oid) = 0`);
  const indexes = await client.query<{ child: string; parent: string }>(
    `select c.relname as child, p.relname as parent from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where c.relkind = 'i'`,
  );
  return { empty: new Set(empty.rows.map((row) => row.relname)), parentOf: new Map(indexes.rows.map((row) => [row.child, row.parent])) };
}

async function plan(sql: string, params: unknown[]): Promise<PlanNode[]> {
  const result = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (format json) ${numbered(sql)}`, params);
  return nodes(result.rows[0]!['QUERY PLAN'][0]!.Plan);
}

const email = emailMatch('user777', 'a');
const domain = emailMatch('@acme42', 'a');
// Prefixes nearly every row has: the first ten must come off the index in order, never from sorting them all.
const everyEmail = emailMatch('user', 'a');
const everyDomain = emailMatch('@acme', 'a');
const listed = accountsMatch('user777');
const listedDomain = accountsMatch('acme42.example');

/**
 * Every lookup: its SQL, parameters, the index that must serve it, and — for a prefix most rows share —
 * that the index order serves the limit (no sort of every match). A selective prefix may be read with a
 * bitmap and its few rows sorted, as the planner likes.
 */
const lookups: [name: string, sql: string, params: unknown[], indexes: (string | string[])[], ordered?: 'in index order'][] = [
  ['account by id', SEARCH_SQL.accountById, ['00000000-0000-4000-8000-000000000777'], ['account_pkey']],
  ['email prefix', SEARCH_SQL.emailPrefix(email), [email.pattern, SEARCH_LIMIT + 1], ['account_email_prefix_idx']],
  ['email domain prefix', SEARCH_SQL.emailPrefix(domain), [domain.pattern, SEARCH_LIMIT + 1], ['account_email_domain_idx']],
  ['organisation name prefix', SEARCH_SQL.organisationName, ['company 12%', SEARCH_LIMIT + 1], ['organisation_name_prefix_idx']],
  ['key by id', SEARCH_SQL.keyById, ['00000000-0000-4000-8000-000000000001'], ['api_key_pkey']],
  ['whole key (hash)', SEARCH_SQL.keyByHash, ['0'.repeat(64)], ['api_key_token_hash_unique']],
  // Escaped as the service escapes it: `_` is a wildcard to `like` otherwise, and only `svc` would narrow the range.
  ['key prefix', SEARCH_SQL.keyByPrefix, [`${likeEscape('svc_live_ab')}%`, SEARCH_LIMIT + 1], ['api_key_prefix_idx']],
  ['key prefix…last4', SEARCH_SQL.keyByParts, ['svc_live_abc', 'wxyz', SEARCH_LIMIT + 1], ['api_key_prefix_idx']],
  ['request id or client request id', REQUEST_BY_ID_SQL, ['mbr_gen00000777', 'mbr_gen00000777', SEARCH_LIMIT + 1], ['usage_ledger_request_idx', 'usage_ledger_client_request_idx']],
  ['order number or trade number', SEARCH_SQL.order, ['svcgen000000000000000000777', 'svcgen000000000000000000777', SEARCH_LIMIT + 1], ['billing_order_pkey', 'billing_order_provider_trade_no_unique']],
  ['application by id', SEARCH_SQL.applicationById, ['00000000-0000-4000-9000-000000000777'], ['enterprise_application_pkey']],
  ['a prefix of most emails', SEARCH_SQL.emailPrefix(everyEmail), [everyEmail.pattern, SEARCH_LIMIT + 1], ['account_email_prefix_idx'], 'in index order'],
  ['a prefix of many domains', SEARCH_SQL.emailPrefix(everyDomain), [everyDomain.pattern, SEARCH_LIMIT + 1], ['account_email_domain_idx'], 'in index order'],
  ['a prefix of every organisation name', SEARCH_SQL.organisationName, ['company%', SEARCH_LIMIT + 1], ['organisation_name_prefix_idx'], 'in index order'],
  ['a prefix of every key', SEARCH_SQL.keyByPrefix, [`${likeEscape('svc_live_')}%`, SEARCH_LIMIT + 1], ['api_key_prefix_idx'], 'in index order'],
  // The list pages newest first: the planner reads the matches by their prefix index and sorts them, or walks
  // the (created_at, id) index newest first and keeps the matches, whichever it expects to be cheaper.
  ['accounts(search) email prefix', accountListSql([listed.sql]), [...listed.params, 26], [['account_email_prefix_idx', 'account_created_idx']]],
  ['accounts(search) a domain: address or domain prefix', accountListSql([listedDomain.sql]), [...listedDomain.params, 26], [['account_email_prefix_idx', 'account_created_idx'], ['account_email_domain_idx', 'account_created_idx']]],
];

describe(`staff search plans over ${accounts.toLocaleString('en')} accounts`, () => {
  it.each(lookups)('%s uses its index and scans no table whole', async (_name, sql, params, indexes, ordered) => {
    const planned = await plan(sql, params);
    // The first ten of many matches come straight off the index, never from sorting all of them.
    if (ordered) expect(planned.filter((node) => node['Node Type'].endsWith('Sort')).map((node) => node['Node Type'])).toEqual([]);
    // The ledger is split by month: a month with no rows yet is read whole at no cost, and each month's index
    // is named after the ledger's own (`usage_ledger_request_idx` → `usage_ledger_2026_12_request_id_idx`).
    const { empty, parentOf } = await partitions();
    const scans = planned.filter((node) => node['Node Type'] === 'Seq Scan' && !empty.has(node['Relation Name']!)).map((node) => node['Relation Name']);
    expect(scans, JSON.stringify(planned.map((node) => [node['Node Type'], node['Relation Name'] ?? node['Index Name']]))).toEqual([]);
    const used = planned.map((node) => node['Index Name']).filter((name): name is string => Boolean(name)).map((name) => parentOf.get(name) ?? name);
    for (const index of indexes) {
      const either = typeof index === 'string' ? [index] : index;
      expect(either.some((name) => used.includes(name)), `${either.join(' or ')} in ${JSON.stringify(used)}`).toBe(true);
    }
  });

  it('for the record: what the search box answers, and how fast', async () => {
    for (const text of ['user777', '@acme42', 'Company 12', 'svc_live_ab', 'mbr_gen00000777', 'mbr_client00000770', 'svcgen000000000000000000777', '00000000-0000-4000-8000-000000000777', '00000000-0000-4000-9000-000000000777', 'corp.example', 'u']) {
      const started = performance.now();
      const result = await app.app.services.staffSearch.search(staff, text);
      console.log(`search plan: staffSearch("${text}") → ${result.hits.length}${result.truncated ? '+' : ''} hits (${result.shape}) in ${Math.round(performance.now() - started)} ms`);
      expect(result.hits.length).toBeGreaterThan(0);
    }
    for (const search of ['user77', '@corp.example', 'nobody']) {
      const started = performance.now();
      const page = await app.app.services.staff.searchAccounts(staff, { search, first: 25 });
      console.log(`search plan: accounts(search: "${search}") → ${page.nodes.length} in ${Math.round(performance.now() - started)} ms`);
    }
  });
});

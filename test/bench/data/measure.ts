/**
 * What staff and members do, against svc running on the loaded database: each operation is the request the
 * admin app or member app really sends (their own GraphQL documents, printed), over HTTP with a signed-in
 * web session. Each returns how many rows it showed, so a run (and the test) can tell an empty answer from a
 * fast one.
 */
import { randomBytes } from 'node:crypto';
import { print, type DocumentNode } from 'graphql';
import pg from 'pg';
import { hashPassword } from '../../../server/modules/account/password.ts';
import { ORDERS_QUERY } from '../../../web/src/modules/billing/graphql/orders.query.ts';
import { ORGANISATION_CONSOLE_QUERY } from '../../../web/src/modules/enterprise/graphql/organisation-console.query.ts';
import { ACCOUNT_AUDIT_QUERY } from '../../../web/src/modules/staff/graphql/account-audit.query.ts';
import { ACCOUNT_DETAIL_QUERY } from '../../../web/src/modules/staff/graphql/account-detail.query.ts';
import { ACCOUNTS_QUERY } from '../../../web/src/modules/staff/graphql/accounts.query.ts';
import { AUDIT_LOG_QUERY } from '../../../web/src/modules/staff/graphql/audit-log.query.ts';
import { ENTERPRISE_APPLICATIONS_QUERY } from '../../../web/src/modules/staff/graphql/enterprise-applications.query.ts';
import { REVIEW_QUEUE_QUERY } from '../../../web/src/modules/staff/graphql/review-queue.query.ts';
import { STAFF_ORDERS_QUERY } from '../../../web/src/modules/staff/graphql/staff-orders.query.ts';
import { STAFF_ORGANISATION_QUERY } from '../../../web/src/modules/staff/graphql/staff-organisation.query.ts';
import { STAFF_SEARCH_QUERY } from '../../../web/src/modules/staff/graphql/staff-search.query.ts';
import { STATS_QUERY } from '../../../web/src/modules/staff/graphql/stats.query.ts';
import { USAGE_HISTORY_QUERY } from '../../../web/src/modules/usage/graphql/usage-history.query.ts';
import { USAGE_QUERY } from '../../../web/src/modules/usage/graphql/usage.query.ts';
import { BUSY, ids, STAFF, type Sizes } from './load.ts';

export interface Operation {
  name: string;
  /** Who does it: staff (the admin app) or member (the member app, an organisation's console). */
  who: 'staff' | 'member';
  /** Sends the request once; resolves to the number of rows the answer shows (0 = nothing to show). */
  run(): Promise<number>;
}

/** A signed-in browser: the session cookie and the app's Origin. */
class Session {
  readonly origin: string;
  readonly cookie: string;
  constructor(origin: string, cookie: string) {
    this.origin = origin;
    this.cookie = cookie;
  }

  async graphql(document: DocumentNode, variables: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: this.origin, cookie: this.cookie },
      body: JSON.stringify({ query: print(document), variables }),
    });
    const body = (await response.json()) as { data?: Record<string, unknown>; errors?: { message: string }[] };
    if (!response.ok || body.errors?.length || !body.data) throw new Error(`GraphQL answered ${response.status}: ${JSON.stringify(body.errors ?? body).slice(0, 300)}`);
    return body.data;
  }

  async get(path: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.origin}${path}`, { headers: { origin: this.origin, cookie: this.cookie } });
    const body = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return body;
  }
}

/** Gives the accounts a password and signs them in (`POST /api/membership/auth/login`), as a browser would. */
async function signIn(origin: string, db: pg.Client, accountIds: string[]): Promise<Session[]> {
  const password = `bench-${randomBytes(9).toString('hex')}`;
  const hash = await hashPassword(password);
  const sessions: Session[] = [];
  for (const id of accountIds) {
    const { rows } = await db.query<{ email: string }>(`update account set password_hash = $2, email_verified_at = coalesce(email_verified_at, now()) where id = $1 returning email`, [id, hash]);
    if (!rows[0]) throw new Error(`no account ${id} to sign in as`);
    let response: Response;
    // A 503 is svc's Redis not answering in time (a loaded shared machine): a browser's user would try again.
    for (let attempt = 1; ; attempt++) {
      response = await fetch(`${origin}/api/membership/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ email: rows[0].email, password }),
      });
      if (response.status !== 503 || attempt === 5) break;
      await new Promise((done) => setTimeout(done, 1000));
    }
    if (!response.ok) throw new Error(`signing in as ${rows[0].email} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    const cookie = response.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    sessions.push(new Session(origin, cookie));
  }
  return sessions;
}

const count = (value: unknown): number => (Array.isArray(value) ? value.length : value ? 1 : 0);
const at = (value: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, key) => (v as Record<string, unknown> | null | undefined)?.[key], value);

/**
 * Signs in staff (an admin), a busy member, a light member and an organisation's owner, picks what they
 * will look up (a real email, order number, request id, key prefix, organisation name, deep cursors), and
 * returns the operations.
 */
export async function operations(origin: string, databaseUrl: string, sizes: Sizes): Promise<Operation[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const busy = ids.account(STAFF + 1);
    // A light member: someone in the long tail with a few requests (most people).
    const { rows: light } = await db.query<{ id: string }>(
      `select a.id from generate_series($1::int, $1::int + 200) n join account a on a.id = md5('acct:' || n)::uuid
        where exists (select 1 from usage_ledger l where l.account_id = a.id) limit 1`,
      [Math.floor(sizes.accounts * 0.6)],
    );
    if (!light[0]) throw new Error('no light member with ledger rows');
    const owner = ids.account(STAFF + BUSY + 1);
    const organisation = ids.organisation(1);
    const [staff, busyMember, lightMember, ownerSession] = await signIn(origin, db, [ids.account(1), busy, light[0].id, owner]);
    const pick = async (sql: string, params: unknown[] = []) => {
      const { rows } = await db.query<{ v: string }>(sql, params);
      if (!rows[0]) throw new Error(`nothing to look up: ${sql}`);
      return rows[0].v;
    };
    const middle = Math.floor(sizes.accounts / 2);
    const email = await pick(`select email as v from account where id = $1`, [ids.account(middle)]);
    const orgName = await pick(`select name as v from organisation where id = $1`, [ids.organisation(Math.ceil(sizes.organisations / 2))]);
    const keyPrefix = await pick(`select prefix as v from api_key where kind = 'personal' and account_id = $1 limit 1`, [ids.account(Math.floor(middle / 3) * 3)]);
    const requestId = await pick(`select request_id as v from usage_ledger where account_id = $1 order by created_at desc limit 1 offset 3`, [busy]);
    const audited = await pick(`select target_id as v from audit_log where target_type = 'account' order by id desc limit 1`);
    const orderId = await pick(`select id as v from billing_order where account_id = $1 order by created_at desc limit 1`, [busy]);

    // Cursors deep into the lists: what "older" shows after paging back.
    const deepCursor = async (session: Session, document: DocumentNode, field: string[], variables: Record<string, unknown>, pages: number) => {
      let after: string | null = null;
      for (let page = 0; page < pages; page++) {
        const data = await session.graphql(document, { ...variables, after });
        const next = at(data, ...field, 'pageInfo', 'endCursor') as string | null;
        if (!next || !at(data, ...field, 'pageInfo', 'hasNextPage')) break;
        after = next;
      }
      return after;
    };
    const historyDeep = await deepCursor(busyMember!, USAGE_HISTORY_QUERY, ['usageHistory'], { first: 20 }, 25);
    const auditDeep = await deepCursor(staff!, AUDIT_LOG_QUERY, ['auditLog'], { filter: {}, first: 50 }, 20);

    const search = (name: string, query: string): Operation => ({
      name: `staff search: ${name}`,
      who: 'staff',
      run: async () => count(at(await staff!.graphql(STAFF_SEARCH_QUERY, { query }), 'staffSearch', 'hits')),
    });
    return [
      search('email', email),
      search('email prefix', email.slice(0, email.indexOf('.') + 3)),
      search('organisation name', orgName.split(' ').slice(0, 2).join(' ')),
      search('key prefix', keyPrefix),
      search('request id', requestId),
      search('order number', orderId),
      { name: 'staff accounts list (newest)', who: 'staff', run: async () => count(at(await staff!.graphql(ACCOUNTS_QUERY, { first: 25 }), 'accounts', 'nodes')) },
      { name: 'account page (busy member)', who: 'staff', run: async () => count(at(await staff!.graphql(ACCOUNT_DETAIL_QUERY, { id: busy, requests: 20 }), 'account', 'usageHistory', 'nodes')) },
      { name: 'account page: audit entries', who: 'staff', run: async () => count(at(await staff!.graphql(ACCOUNT_AUDIT_QUERY, { id: audited, first: 50 }), 'account', 'auditLog', 'nodes')) },
      { name: 'review queue', who: 'staff', run: async () => count(at(await staff!.graphql(ENTERPRISE_APPLICATIONS_QUERY, { state: 'pending_review', first: 50 }), 'enterpriseApplications', 'nodes')) },
      { name: 'review queue summary', who: 'staff', run: async () => (at(await staff!.graphql(REVIEW_QUEUE_QUERY), 'reviewQueue', 'pending') as number) > 0 ? 1 : 0 },
      { name: 'applications (all, newest)', who: 'staff', run: async () => count(at(await staff!.graphql(ENTERPRISE_APPLICATIONS_QUERY, { state: null, first: 50 }), 'enterpriseApplications', 'nodes')) },
      { name: 'dashboard statistics (30 days)', who: 'staff', run: async () => count(at(await staff!.graphql(STATS_QUERY, { range: 'last_30_days' }), 'stats', 'byDay')) },
      { name: 'dashboard statistics (90 days)', who: 'staff', run: async () => count(at(await staff!.graphql(STATS_QUERY, { range: 'last_90_days' }), 'stats', 'byDay')) },
      { name: 'audit log: first page', who: 'staff', run: async () => count(at(await staff!.graphql(AUDIT_LOG_QUERY, { filter: {}, first: 50 }), 'auditLog', 'nodes')) },
      { name: 'audit log: page 20', who: 'staff', run: async () => count(at(await staff!.graphql(AUDIT_LOG_QUERY, { filter: {}, first: 50, after: auditDeep }), 'auditLog', 'nodes')) },
      { name: 'audit log: one action', who: 'staff', run: async () => count(at(await staff!.graphql(AUDIT_LOG_QUERY, { filter: { action: 'account:disable' }, first: 50 }), 'auditLog', 'nodes')) },
      { name: 'organisation page (staff)', who: 'staff', run: async () => count(at(await staff!.graphql(STAFF_ORGANISATION_QUERY, { id: organisation }), 'organisation')) },
      { name: 'payment orders: all', who: 'staff', run: async () => count(at(await staff!.graphql(STAFF_ORDERS_QUERY, { first: 50 }), 'staffOrders')) },
      { name: 'payment orders: refunded', who: 'staff', run: async () => count(at(await staff!.graphql(STAFF_ORDERS_QUERY, { state: 'refunded', first: 50 }), 'staffOrders')) },
      { name: 'payment orders: one account', who: 'staff', run: async () => count(at(await staff!.graphql(STAFF_ORDERS_QUERY, { accountId: busy, first: 50 }), 'staffOrders')) },
      { name: 'member usage: pools (day/week/month)', who: 'member', run: async () => count(at(await busyMember!.graphql(USAGE_QUERY), 'usage', 'pools')) },
      { name: 'member usage: history (busy)', who: 'member', run: async () => count(at(await busyMember!.graphql(USAGE_HISTORY_QUERY, { first: 20 }), 'usageHistory', 'nodes')) },
      { name: 'member usage: history page 25 (busy)', who: 'member', run: async () => count(at(await busyMember!.graphql(USAGE_HISTORY_QUERY, { first: 20, after: historyDeep }), 'usageHistory', 'nodes')) },
      { name: 'member usage: history (light)', who: 'member', run: async () => count(at(await lightMember!.graphql(USAGE_HISTORY_QUERY, { first: 20 }), 'usageHistory', 'nodes')) },
      { name: 'member usage: REST /api/membership/usage', who: 'member', run: async () => count(at(await busyMember!.get('/api/membership/usage'), 'pools')) },
      { name: 'member orders', who: 'member', run: async () => count(at(await busyMember!.graphql(ORDERS_QUERY, { first: 50 }), 'orders')) },
      { name: 'organisation console (usage, keys, connecting IPs)', who: 'member', run: async () => count(at(await ownerSession!.graphql(ORGANISATION_CONSOLE_QUERY, { id: organisation, requests: 20 }), 'organisation', 'connections')) },
    ];
  } finally {
    await db.end();
  }
}

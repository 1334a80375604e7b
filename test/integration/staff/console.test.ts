/**
 * The staff console's reads (issue 10): account search and detail, and the dashboard's `stats`, over
 * GraphQL and their REST twins. Members are refused each one (403 `forbidden`, nothing leaks); staff with a
 * bearer key are refused (401, web session only); support and admin see the same accounts, and only
 * admins are told they may manage staff.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertLedgerRows } from '../../../server/metering/ledger.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { bearerGraphQL } from '../../helpers/browser.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let people: ReturnType<typeof seed>;

beforeAll(async () => {
  setup = await realMode();
  app = await startApp(setup.config);
  people = seed(app);
});

afterAll(async () => {
  await app?.close();
  await setup?.cleanup();
});

const ACCOUNT_DETAIL = `query($id: ID!) {
  account(id: $id) {
    id email role planPackage planPackageUntil disabled
    usage { packageId pools { class window used { amountMicros } limit { amountMicros } } }
    usageHistory(first: 5) { nodes { requestId model cost { amountMicros } status } pageInfo { hasNextPage } }
    apiKeys { id name prefix last4 }
    sessions { id kind current }
    auditLog { nodes { action reason actorEmail targetType targetId } }
  }
}`;

/** Every staff read, as GraphQL: name, query, variables. */
function graphqlReads(target: string): [string, string, Record<string, unknown>][] {
  return [
    ['accounts', '{ accounts { nodes { id } } }', {}],
    ['accounts(search)', 'query($q: String) { accounts(search: $q) { nodes { id } } }', { q: 'example.com' }],
    ['account', 'query($id: ID!) { account(id: $id) { id email } }', { id: target }],
    ['stats', '{ stats(range: last_7_days) { totals { requests } } }', {}],
    ['stats.reviewQueue', '{ stats { reviewQueue { pending } } }', {}],
    ['auditLog(aboutAccountId)', 'query($id: ID!) { auditLog(filter: { aboutAccountId: $id }) { nodes { id } } }', { id: target }],
  ];
}

function restReads(target: string): string[] {
  const base = '/api/membership/staff';
  return [`${base}/accounts`, `${base}/accounts?search=example`, `${base}/accounts/${target}`, `${base}/stats?range=last_7_days`, `${base}/audit-log?aboutAccountId=${target}`];
}

async function withKeyAndUsage(person: Person): Promise<string> {
  const { keyId } = await person.withKey('laptop');
  await insertLedgerRows(app.app.services.db, 'USD', [ledgerEntry(person.id, { model: 'svc-2.1', class: 'premium', costMicros: 4200, inputTokens: 10, outputTokens: 20 })]);
  return keyId;
}

describe('members are refused every staff read', () => {
  it('over GraphQL: 403 forbidden, and no data', async () => {
    const member = await people.member();
    const target = await people.member({ tag: 'target' });
    for (const [name, query, variables] of graphqlReads(target.id)) {
      const result = await member.web.graphql(query, variables);
      expect(result.errors?.[0]?.extensions?.code, name).toBe('forbidden');
      expect(result.errors?.[0]?.extensions?.status, name).toBe(403);
      // Non-null fields null the whole answer; the nullable `account` is null itself.
      expect(Object.values(result.data ?? {}), name).toEqual(Object.keys(result.data ?? {}).map(() => null));
    }
  });

  it("over GraphQL on their own account: the staff-only fields of `me` are refused, the rest answers", async () => {
    const member = await people.member();
    for (const field of ['usage { packageId }', 'usageHistory { nodes { requestId } }', 'apiKeys { id }', 'sessions { id }', 'auditLog { nodes { id } }']) {
      const result = await member.web.graphql<{ me: null }>(`{ me { email ${field} } }`);
      expect(result.errors?.[0]?.extensions?.code, field).toBe('forbidden');
      expect(result.errors?.[0]?.message, field).toContain('account:read is for support staff and admins');
    }
    const plain = await member.web.graphql<{ me: { email: string; viewerCanManageAccounts: boolean } }>('{ me { email viewerCanManageAccounts } }');
    expect(plain.data?.me).toEqual({ email: member.email, viewerCanManageAccounts: false });
  });

  it('over REST: 403 forbidden in the envelope', async () => {
    const member = await people.member();
    const target = await people.member({ tag: 'target' });
    for (const path of restReads(target.id)) {
      const response = await member.web.fetch(path);
      expect(response.status, path).toBe(403);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body, path).toMatchObject({ ok: false, code: 'forbidden', stage: 'auth' });
      expect(JSON.stringify(body), path).not.toContain(target.email);
    }
  });

  it('signed out: 401 sign_in_required', async () => {
    const target = await people.member({ tag: 'target' });
    const anonymous = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ accounts { nodes { id } } }' }) });
    const body = (await anonymous.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('sign_in_required');
    for (const path of restReads(target.id)) expect((await fetch(`${app.url}${path}`)).status, path).toBe(401);
  });

  it('staff with a bearer key: 401, told to use a web session', async () => {
    const support = await people.staff('support');
    const key = await support.key();
    const target = await people.member({ tag: 'target' });
    for (const [name, query, variables] of graphqlReads(target.id)) {
      const result = await bearerGraphQL(app.url, key, query, variables);
      expect(result.errors?.[0]?.extensions?.code, name).toBe('sign_in_required');
      expect(result.errors?.[0]?.message, name).toContain('needs a web session');
    }
    for (const path of restReads(target.id)) {
      const response = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status, path).toBe(401);
    }
  });
});

describe('account search', () => {
  it('finds by exact id or email substring (any case), newest first, in pages; % and _ are plain text', async () => {
    const support = await people.staff('support');
    const tag = `find${Date.now().toString(36)}`;
    const made: Person[] = [];
    for (let i = 0; i < 5; i++) made.push(await people.member({ tag: `${tag}-n${i}` }));
    const odd = await people.member({ tag: `${tag}_under` });
    const search = async (q: string, first = 10, after: string | null = null) =>
      (
        await support.web.graphql<{ accounts: { nodes: { id: string; email: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } }>(
          'query($q: String, $first: Int, $after: String) { accounts(search: $q, first: $first, after: $after) { nodes { id email } pageInfo { hasNextPage endCursor } } }',
          { q, first, after },
        )
      ).data!.accounts;

    const all = await search(tag.toUpperCase());
    expect(all.nodes.map((n) => n.id)).toEqual([odd.id, ...made.map((p) => p.id).reverse()]);
    expect(all.pageInfo.hasNextPage).toBe(false);

    // Pages of two: newest first, no repeats, nothing skipped.
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 4; page++) {
      const result = await search(tag, 2, after);
      seen.push(...result.nodes.map((n) => n.id));
      if (!result.pageInfo.hasNextPage) break;
      after = result.pageInfo.endCursor;
    }
    expect(seen).toEqual(all.nodes.map((n) => n.id));

    expect((await search(made[2]!.id)).nodes.map((n) => n.email)).toEqual([made[2]!.email]);
    expect((await search(`${tag}_`)).nodes.map((n) => n.id)).toEqual([odd.id]);
    expect((await search(`${tag}%n`)).nodes).toEqual([]);
    expect((await search('no-such-person-anywhere')).nodes).toEqual([]);
  });

  it('refuses a page size out of range and a cursor it did not make', async () => {
    const support = await people.staff('support');
    // A variable, as the admin app sends it: a literal 1000 is refused earlier, by the document cost limit.
    const big = await support.web.graphql('query($first: Int) { accounts(first: $first) { nodes { id } } }', { first: 1000 });
    expect(big.errors?.[0]).toMatchObject({ message: 'first must be an integer from 1 to 100.', extensions: { code: 'invalid_request' } });
    const forged = await support.web.fetch('/api/membership/staff/accounts?after=bm9wZQ');
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ code: 'invalid_request', error: { param: 'after' } });
  });
});

describe('account detail', () => {
  it('shows plan, pools, ledger, keys, sessions and its own audit entries after staff actions', async () => {
    const support = await people.staff('support');
    const member = await people.member({ tag: 'detail' });
    const keyId = await withKeyAndUsage(member);
    const unrelated = await people.member({ tag: 'unrelated' });
    await support.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "unrelated case") { id } }', { id: unrelated.id });

    await support.web.graphql('mutation($id: ID!) { setAccountPackage(accountId: $id, packageId: "pro", reason: "goodwill after outage") { id } }', { id: member.id });
    await support.web.graphql('mutation($id: ID!) { revokeApiKey(id: $id, reason: "posted on a forum") { id } }', { id: keyId });

    const result = await support.web.graphql<{ account: Record<string, any> }>(ACCOUNT_DETAIL, { id: member.id });
    expect(result.errors).toBeUndefined();
    const account = result.data!.account;
    expect(account).toMatchObject({ id: member.id, email: member.email, role: 'member', planPackage: 'pro', planPackageUntil: null, disabled: false });
    expect(account.usage.packageId).toBe('pro');
    expect(account.usage.pools).toHaveLength(6);
    expect(account.usage.pools.find((p: any) => p.class === 'premium' && p.window === 'day').limit.amountMicros).toBe(1_000_000);
    expect(account.usageHistory.nodes).toEqual([expect.objectContaining({ model: 'svc-2.1', cost: { amountMicros: 4200 }, status: 'ok' })]);
    expect(account.apiKeys).toEqual([]); // the one key was revoked
    expect(account.sessions).toEqual([expect.objectContaining({ kind: 'web', current: false })]);
    expect(account.auditLog.nodes.map((n: any) => [n.action, n.reason, n.actorEmail, n.targetType])).toEqual([
      ['api-key:revoke-any', 'posted on a forum', support.email, 'api_key'],
      ['account:set-package', 'goodwill after outage', support.email, 'account'],
    ]);

    // The REST twin answers the same account.
    const rest = await support.web.fetch(`/api/membership/staff/accounts/${member.id}`);
    expect(rest.status).toBe(200);
    const body = (await rest.json()) as { account: { email: string; planPackage: string; usage: { packageId: string }; apiKeys: unknown[]; sessions: unknown[] } };
    expect(body.account).toMatchObject({ email: member.email, planPackage: 'pro', usage: { packageId: 'pro' }, apiKeys: [], sessions: [expect.objectContaining({ kind: 'web' })] });
  });

  it('an unknown or malformed id is null over GraphQL and 404 over REST', async () => {
    const support = await people.staff('support');
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const result = await support.web.graphql<{ account: null }>('query($id: ID!) { account(id: $id) { id } }', { id });
      expect(result).toMatchObject({ data: { account: null } });
      const rest = await support.web.fetch(`/api/membership/staff/accounts/${id}`);
      expect(rest.status).toBe(404);
      expect(await rest.json()).toMatchObject({ code: 'not_found' });
    }
  });
});

describe('support and admin', () => {
  it('both read any account, staff accounts included; only admins are told they may manage staff', async () => {
    const support = await people.staff('support');
    const admin = await people.staff('admin');
    for (const viewer of [support, admin]) {
      const result = await viewer.web.graphql<{ account: { role: string; apiKeys: unknown[] } }>('query($id: ID!) { account(id: $id) { role apiKeys { id } } }', { id: admin.id });
      expect(result.data?.account.role).toBe('admin');
    }
    const flags = '{ me { viewerCanManageAccounts viewerCanReadAuditLog viewerCanManageStaff viewerCanReviewApplications } }';
    expect((await support.web.graphql<{ me: unknown }>(flags)).data?.me).toEqual({
      viewerCanManageAccounts: true,
      viewerCanReadAuditLog: true,
      viewerCanManageStaff: false,
      viewerCanReviewApplications: true,
    });
    expect((await admin.web.graphql<{ me: unknown }>(flags)).data?.me).toEqual({
      viewerCanManageAccounts: true,
      viewerCanReadAuditLog: true,
      viewerCanManageStaff: true,
      viewerCanReviewApplications: true,
    });
  });

  it('support reads the audit log filtered by actor email and action; the REST twin agrees', async () => {
    const support = await people.staff('support');
    const target = await people.member({ tag: 'audited' });
    await support.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "card testing") { id } }', { id: target.id });
    await support.web.graphql('mutation($id: ID!) { enableAccount(id: $id, reason: "cleared") { id } }', { id: target.id });
    const mine = await support.web.graphql<{ auditLog: { nodes: { action: string; targetId: string }[] } }>(
      'query($email: String) { auditLog(filter: { actorEmail: $email }) { nodes { action targetId } } }',
      { email: support.email.toUpperCase() },
    );
    expect(mine.data?.auditLog.nodes).toEqual([
      { action: 'account:enable', targetId: target.id },
      { action: 'account:disable', targetId: target.id },
    ]);
    const rest = await support.web.fetch(`/api/membership/staff/audit-log?actorEmail=${encodeURIComponent(support.email)}&action=account:disable`);
    expect(((await rest.json()) as { entries: { action: string }[] }).entries.map((e) => e.action)).toEqual(['account:disable']);
  });

  it('support may not change a role, an admin may (and the admin-only control is backed by the server)', async () => {
    const support = await people.staff('support');
    const admin = await people.staff('admin');
    const target = await people.member({ tag: 'promoted' });
    const refused = await support.web.graphql('mutation($id: ID!) { setAccountRole(accountId: $id, role: support) { role } }', { id: target.id });
    expect(refused.errors?.[0]?.extensions?.code).toBe('forbidden');
    const done = await admin.web.graphql<{ setAccountRole: { role: string } }>('mutation($id: ID!) { setAccountRole(accountId: $id, role: support, reason: "new hire") { role } }', { id: target.id });
    expect(done.data?.setAccountRole.role).toBe('support');
  });
});

/**
 * Staff rights are decided by the services (server/authz), so every transport refuses the same way: members
 * get 403 `forbidden` for every staff query and mutation over GraphQL and REST, staff using a bearer key get
 * 401 (staff act only from a web session), support is not admin. Every staff action writes one audit row,
 * and the audit log refuses to be edited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { bearerGraphQL } from '../../helpers/browser.ts';
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

/** Every staff operation, aimed at `target` and at a key of theirs. */
function graphqlOperations(target: string, keyId: string): [string, string, Record<string, unknown>][] {
  return [
    ['auditLog', '{ auditLog { nodes { id } } }', {}],
    ['disableAccount', 'mutation($id: ID!) { disableAccount(id: $id, reason: "spam") { id } }', { id: target }],
    ['enableAccount', 'mutation($id: ID!) { enableAccount(id: $id) { id } }', { id: target }],
    ['endSessions', 'mutation($id: ID!) { endSessions(accountId: $id, reason: "stolen laptop") }', { id: target }],
    ['setAccountRole', 'mutation($id: ID!) { setAccountRole(accountId: $id, role: support) { id } }', { id: target }],
    ['setAccountPackage', 'mutation($id: ID!) { setAccountPackage(accountId: $id, packageId: "pro", reason: "goodwill") { id } }', { id: target }],
    ['revokeApiKey', 'mutation($id: ID!) { revokeApiKey(id: $id, reason: "leaked") { id } }', { id: keyId }],
  ];
}

function restOperations(target: string, keyId: string): [string, string, Record<string, unknown> | undefined][] {
  const base = '/api/membership/staff';
  return [
    ['GET', `${base}/audit-log`, undefined],
    ['POST', `${base}/accounts/${target}/disable`, { reason: 'spam' }],
    ['POST', `${base}/accounts/${target}/enable`, {}],
    ['POST', `${base}/accounts/${target}/sessions/end`, { reason: 'stolen laptop' }],
    ['POST', `${base}/accounts/${target}/role`, { role: 'support' }],
    ['POST', `${base}/accounts/${target}/package`, { packageId: 'pro', reason: 'goodwill' }],
    ['POST', `${base}/api-keys/${keyId}/revoke`, { reason: 'leaked' }],
  ];
}

async function keyIdOf(person: Person): Promise<{ token: string; id: string }> {
  const token = await person.key();
  const [key] = await app.app.services.apiKeys.listForAccount(person.id);
  return { token, id: key!.id };
}

async function auditRowsFor(targetId: string): Promise<{ action: string; actor_id: string | null; reason: string | null; request_id: string | null; before: unknown; after: unknown }[]> {
  const { rows } = await setup.database.query('select * from audit_log where target_id = $1 order by id', [targetId]);
  return rows;
}

const models = (token: string) => fetch(`${app.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });

describe('members are refused every staff operation', () => {
  it('over GraphQL: 403 forbidden naming the rule, and nothing changes', async () => {
    const member = await people.member();
    const target = await people.member({ tag: 'target' });
    const key = await keyIdOf(target);
    for (const [name, query, variables] of graphqlOperations(target.id, key.id)) {
      const result = await member.web.graphql(query, variables);
      expect(result.errors?.[0]?.extensions?.code, name).toBe('forbidden');
      expect(result.errors?.[0]?.extensions?.status, name).toBe(403);
      expect(result.errors?.[0]?.message, name).toMatch(/^Forbidden: [a-z:-]+ is for support staff and admins|^Forbidden: [a-z:-]+ is for admins/);
      expect(result.data ?? null, name).toBeNull();
    }
    expect((await models(key.token)).status).toBe(200);
    expect(await auditRowsFor(target.id)).toEqual([]);
    expect((await app.app.services.accounts.findById(target.id))!).toMatchObject({ disabledAt: null, role: 'member', planPackage: 'free' });
  });

  it('over REST: 403 forbidden in the envelope', async () => {
    const member = await people.member();
    const target = await people.member({ tag: 'target' });
    const key = await keyIdOf(target);
    for (const [method, path, body] of restOperations(target.id, key.id)) {
      const response = await member.web.fetch(path, { method, body });
      expect(response.status, path).toBe(403);
      expect(await response.json(), path).toMatchObject({ ok: false, code: 'forbidden', stage: 'auth', error: { type: 'permission_error' } });
    }
    expect((await models(key.token)).status).toBe(200);
    expect(await auditRowsFor(target.id)).toEqual([]);
  });
});

describe('staff act only from a web session', () => {
  it('an admin with a bearer key is refused over GraphQL and REST (401, told to use a web session)', async () => {
    const admin = await people.staff('admin');
    const adminKey = await admin.key();
    const target = await people.member({ tag: 'target' });
    const key = await keyIdOf(target);
    for (const [name, query, variables] of graphqlOperations(target.id, key.id)) {
      const result = await bearerGraphQL(app.url, adminKey, query, variables);
      expect(result.errors?.[0]?.extensions?.code, name).toBe('sign_in_required');
      expect(result.errors?.[0]?.message, name).toContain('needs a web session');
    }
    for (const [method, path, body] of restOperations(target.id, key.id)) {
      const response = await fetch(`${app.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      expect(response.status, path).toBe(401);
      expect(await response.json(), path).toMatchObject({ code: 'sign_in_required', message: expect.stringMatching(/needs a web session .*sign in at \/(admin|account) in a browser/) });
    }
    expect((await models(key.token)).status).toBe(200);
    expect(await auditRowsFor(target.id)).toEqual([]);
  });

  it('a cookie-authenticated staff action from another site is refused (Origin check)', async () => {
    const admin = await people.staff('admin');
    const target = await people.member({ tag: 'target' });
    const response = await admin.web.fetch(`/api/membership/staff/accounts/${target.id}/disable`, { body: { reason: 'csrf' }, headers: { origin: 'https://evil.example' } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'forbidden', message: expect.stringContaining('Cross-site request refused') });
    expect((await app.app.services.accounts.findById(target.id))!.disabledAt).toBeNull();
  });
});

describe('support and admin', () => {
  it('support may disable members but not set roles nor touch admin accounts; admins may', async () => {
    const support = await people.staff('support');
    const admin = await people.staff('admin');
    const target = await people.member({ tag: 'target' });
    const role = await support.web.graphql('mutation($id: ID!) { setAccountRole(accountId: $id, role: admin) { role } }', { id: target.id });
    // The admin app shows the Chinese to a Chinese reader: the same rule, the same values.
    expect(role.errors?.[0]).toMatchObject({
      message: "Forbidden: staff:set-role is for admins; this account's role is support.",
      extensions: { code: 'forbidden', messageZh: '无权操作：staff:set-role 仅限管理员使用；当前账户的角色是客服。' },
    });
    const restRole = await support.web.fetch(`/api/membership/staff/accounts/${target.id}/role`, { body: { role: 'admin' } });
    expect(restRole.status).toBe(403);
    const onAdmin = await support.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "x") { id } }', { id: admin.id });
    expect(onAdmin.errors?.[0]?.message).toContain('Only an admin may act on a staff account');

    const disabled = await support.web.graphql<{ disableAccount: { disabled: boolean } }>('mutation($id: ID!) { disableAccount(id: $id, reason: "chargeback") { disabled } }', { id: target.id });
    expect(disabled.data?.disableAccount.disabled).toBe(true);
    const promoted = await admin.web.graphql<{ setAccountRole: { role: string } }>('mutation($id: ID!) { setAccountRole(accountId: $id, role: admin) { role } }', { id: support.id });
    expect(promoted.data?.setAccountRole.role).toBe('admin');
  });

  it('admins change roles, the new rights apply to the very next request; nobody re-roles themselves', async () => {
    const admin = await people.staff('admin');
    const member = await people.member();
    const viewer = '{ me { role viewerCanManageAccounts viewerCanManageStaff viewerCanRefund viewerCanReviewApplications viewerCanReadAuditLog } }';
    expect((await member.web.graphql<{ me: Record<string, unknown> }>(viewer)).data?.me).toEqual({
      role: 'member',
      viewerCanManageAccounts: false,
      viewerCanManageStaff: false,
      viewerCanRefund: false,
      viewerCanReviewApplications: false,
      viewerCanReadAuditLog: false,
    });
    const set = await admin.web.fetch(`/api/membership/staff/accounts/${member.id}/role`, { body: { role: 'support', reason: 'new hire' } });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ ok: true, account: { id: member.id, role: 'support' } });
    expect((await member.web.graphql<{ me: Record<string, unknown> }>(viewer)).data?.me).toEqual({
      role: 'support',
      viewerCanManageAccounts: true,
      viewerCanManageStaff: false,
      viewerCanRefund: false,
      viewerCanReviewApplications: true,
      viewerCanReadAuditLog: true,
    });
    expect((await admin.web.graphql<{ me: Record<string, unknown> }>(viewer)).data?.me).toMatchObject({ viewerCanManageStaff: true, viewerCanRefund: true });
    // The same admin over a bearer key: the staff app's rights are all off (staff act from a web session).
    const overKey = await bearerGraphQL<{ me: Record<string, unknown> }>(app.url, await admin.key(), viewer);
    expect(overKey.data?.me).toMatchObject({ role: 'admin', viewerCanManageAccounts: false, viewerCanManageStaff: false });

    const self = await admin.web.graphql('mutation($id: ID!) { setAccountRole(accountId: $id, role: member) { role } }', { id: admin.id });
    expect(self.errors?.[0]?.message).toContain('cannot be applied to your own account');
    const bad = await admin.web.fetch(`/api/membership/staff/accounts/${member.id}/role`, { body: { role: 'root' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_request', error: { param: 'role' } });
  });
});

describe('API keys: owners and staff share revokeApiKey', () => {
  it('a member revokes their own key without a reason; staff need a reason for anyone else’s, audited', async () => {
    const member = await people.member();
    const own = await keyIdOf(member);
    const mine = await member.web.graphql<{ revokeApiKey: { id: string } }>('mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: own.id });
    expect(mine.data?.revokeApiKey.id).toBe(own.id);
    expect((await models(own.token)).status).toBe(401);
    expect(await auditRowsFor(own.id)).toEqual([]);

    const support = await people.staff('support');
    const theirs = await keyIdOf(member);
    const noReason = await support.web.graphql('mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: theirs.id });
    expect(noReason.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', param: 'reason' });
    expect((await models(theirs.token)).status).toBe(200);
    const response = await support.web.fetch(`/api/membership/staff/api-keys/${theirs.id}/revoke`, { body: { reason: 'posted on a forum' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, key: { id: theirs.id } });
    expect((await models(theirs.token)).status).toBe(401);
    const [row] = await auditRowsFor(theirs.id);
    expect(row).toMatchObject({ action: 'api-key:revoke-any', actor_id: support.id, reason: 'posted on a forum', request_id: response.headers.get('x-svc-request-id') });
    expect(row!.before).toMatchObject({ accountId: member.id, revokedAt: null });
  });
});

describe('the audit log', () => {
  it('records each staff action with actor, before/after, reason and request id', async () => {
    const admin = await people.staff('admin');
    const target = await people.member({ tag: 'audited' });
    await target.key();
    const run = async (query: string, variables: Record<string, unknown>) => {
      const result = await admin.web.graphql(query, variables);
      expect(result.errors).toBeUndefined();
      return result.requestId;
    };
    const ids = [
      await run('mutation($id: ID!) { disableAccount(id: $id, reason: "fraud check") { id } }', { id: target.id }),
      await run('mutation($id: ID!) { enableAccount(id: $id, reason: "cleared") { id } }', { id: target.id }),
      await run('mutation($id: ID!) { endSessions(accountId: $id, reason: "shared password") }', { id: target.id }),
      await run('mutation($id: ID!) { setAccountRole(accountId: $id, role: support) { id } }', { id: target.id }),
      await run('mutation($id: ID!) { setAccountPackage(accountId: $id, packageId: "max_x5", reason: "partner", until: "2099-01-01T00:00:00Z") { id } }', { id: target.id }),
    ];
    const rows = await auditRowsFor(target.id);
    expect(rows.map((row) => row.action)).toEqual(['account:disable', 'account:enable', 'session:end-any', 'staff:set-role', 'account:set-package']);
    expect(rows.map((row) => row.request_id)).toEqual(ids);
    expect(rows.every((row) => row.actor_id === admin.id)).toBe(true);
    expect(rows.map((row) => row.reason)).toEqual(['fraud check', 'cleared', 'shared password', null, 'partner']);
    expect(rows[0]).toMatchObject({ before: { disabledAt: null }, after: { disabledAt: expect.any(String), sessionsEnded: 1 } });
    expect(rows[3]).toMatchObject({ before: { role: 'member' }, after: { role: 'support' } });
    expect(rows[4]).toMatchObject({ before: { planPackage: 'free', planPackageUntil: null }, after: { planPackage: 'max_x5', planPackageUntil: '2099-01-01T00:00:00.000Z' } });

    // GraphQL auditLog: filtered, newest first, page by page.
    const page = async (after: string | null) =>
      (
        await admin.web.graphql<{ auditLog: { nodes: { action: string; actorEmail: string; reason: string | null; requestId: string; before: unknown }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } }>(
          'query($f: AuditLogFilter, $after: String) { auditLog(filter: $f, first: 2, after: $after) { nodes { action actorEmail reason requestId before } pageInfo { hasNextPage endCursor } } }',
          { f: { targetType: 'account', targetId: target.id }, after },
        )
      ).data!.auditLog;
    const first = await page(null);
    expect(first.nodes.map((node) => node.action)).toEqual(['account:set-package', 'staff:set-role']);
    expect(first.nodes[0]).toMatchObject({ actorEmail: admin.email, reason: 'partner', requestId: ids[4], before: { planPackage: 'free' } });
    const second = await page(first.pageInfo.endCursor);
    const third = await page(second.pageInfo.endCursor);
    expect([...second.nodes, ...third.nodes].map((node) => node.action)).toEqual(['session:end-any', 'account:enable', 'account:disable']);
    expect(third.pageInfo.hasNextPage).toBe(false);

    // REST: the same entries, filtered by action.
    const rest = await admin.web.fetch(`/api/membership/staff/audit-log?targetId=${target.id}&action=account:disable`);
    expect(await rest.json()).toMatchObject({ ok: true, entries: [{ action: 'account:disable', actorId: admin.id, reason: 'fraud check' }], nextCursor: null });
    const forged = await admin.web.fetch('/api/membership/staff/audit-log?after=bm9wZQ');
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ code: 'invalid_request', error: { param: 'after' } });
  });

  it('refuses UPDATE, DELETE and TRUNCATE', async () => {
    const admin = await people.staff('admin');
    const target = await people.member({ tag: 'immutable' });
    await admin.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "evidence") { id } }', { id: target.id });
    for (const sql of [
      `update audit_log set reason = 'nothing to see' where target_id = '${target.id}'`,
      `delete from audit_log where target_id = '${target.id}'`,
      'truncate audit_log',
    ]) {
      await expect(setup.database.query(sql), sql).rejects.toThrow('audit_log is append-only');
    }
    expect((await auditRowsFor(target.id)).map((row) => row.reason)).toEqual(['evidence']);
  });
});

/**
 * Issue 46 item 2 (SECURITY "Hardening": staff never act on themselves): a staff member cannot approve or
 * reject an application they submitted, nor re-package (or disable) their own account or an organisation
 * they belong to. Each attempt is a 403 whose message says why, changes nothing, and leaves an audit row
 * `<action>:denied`; another staff member may do the same thing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { addMember, applyFor } from '../../helpers/enterprise.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;

beforeAll(async () => {
  setup = await realMode();
  a = await startApp(setup.config, { config: { rateLimits: { ipPerMinute: 100_000 } } });
});

afterAll(async () => {
  await a?.close();
  await setup?.cleanup();
});

const verify = (accountId: string) => setup.database.query('update account set email_verified_at = now() where id = $1', [accountId]);

async function denials(actor: Person, targetId: string): Promise<{ action: string; after: unknown; reason: string }[]> {
  const { rows } = await setup.database.query(`select action, after, reason from audit_log where actor_id = $1 and target_id = $2 and action like '%:denied' order by id`, [actor.id, targetId]);
  return rows;
}

async function packageOf(accountId: string): Promise<string> {
  return (await setup.database.query('select plan_package from account where id = $1', [accountId])).rows[0].plan_package as string;
}

describe('staff never decide on themselves', () => {
  it('approving or rejecting their own application: 403 saying why, audited, still pending; another reviewer may approve it', async () => {
    const support = await seed(a).staff('support', 'self-applicant');
    const application = await applyFor(support, { kind: 'enterprise' });
    expect(application.state).toBe('pending_review');

    // The admin app is told not to offer the decision…
    const detail = await support.web.graphql<{ enterpriseApplication: { viewerCanDecide: boolean } }>('query($id: ID!) { enterpriseApplication(id: $id) { viewerCanDecide } }', { id: application.id });
    expect(detail.data?.enterpriseApplication.viewerCanDecide).toBe(false);
    // …and the service refuses it anyway.
    const approve = await support.web.graphql('mutation($id: ID!) { approveEnterpriseApplication(id: $id, packageId: "enterprise") { id } }', { id: application.id });
    expect(approve.errors?.[0]?.extensions).toMatchObject({ code: 'forbidden', status: 403 });
    expect(approve.errors?.[0]?.message).toContain(`You submitted application ${application.id}, so you cannot decide on it`);
    const reject = await support.web.graphql('mutation($id: ID!) { rejectEnterpriseApplication(id: $id, reason: "changed my mind") { id } }', { id: application.id });
    expect(reject.errors?.[0]?.extensions).toMatchObject({ code: 'forbidden' });

    expect(await denials(support, application.id)).toEqual([
      { action: 'application:approve:denied', after: { denied: 'own_application' }, reason: expect.stringContaining('you cannot decide on it') },
      { action: 'application:reject:denied', after: { denied: 'own_application' }, reason: expect.stringContaining('you cannot decide on it') },
    ]);
    const { rows } = await setup.database.query('select state, organisation_id from enterprise_application where id = $1', [application.id]);
    expect(rows[0]).toEqual({ state: 'pending_review', organisation_id: null });

    const colleague = await seed(a).staff('admin', 'colleague');
    const seen = await colleague.web.graphql<{ enterpriseApplication: { viewerCanDecide: boolean } }>('query($id: ID!) { enterpriseApplication(id: $id) { viewerCanDecide } }', { id: application.id });
    expect(seen.data?.enterpriseApplication.viewerCanDecide).toBe(true);
    const approved = await colleague.web.graphql<{ approveEnterpriseApplication: { state: string; packageId: string } }>(
      'mutation($id: ID!) { approveEnterpriseApplication(id: $id, packageId: "enterprise") { state packageId } }',
      { id: application.id },
    );
    expect(approved.data?.approveEnterpriseApplication).toEqual({ state: 'approved', packageId: 'enterprise' });
  });

  it('re-packaging an organisation they own or administer: 403 saying why, audited, unchanged; over REST too', async () => {
    const admin = await seed(a).staff('admin', 'org-owner-admin');
    const { organisationId: own } = await applyFor(admin);
    const founder = await seed(a).member({ tag: 'founder' });
    const { organisationId: joined } = await applyFor(founder);
    await addMember(founder, joined!, admin, 'admin', verify);

    for (const [organisationId, role] of [
      [own!, 'owner'],
      [joined!, 'admin'],
    ] as const) {
      const graph = await admin.web.graphql('mutation($id: ID!) { setAccountPackage(accountId: $id, packageId: "enterprise", reason: "our own contract") { id } }', { id: organisationId });
      expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'forbidden', status: 403 });
      expect(graph.errors?.[0]?.message).toContain(`cannot be applied to an organisation you belong to (you are its ${role})`);
      const rest = await admin.web.fetch(`/api/membership/staff/accounts/${organisationId}/package`, { body: { packageId: 'max_x20', reason: 'our own contract' } });
      expect(rest.status).toBe(403);
      const envelope = (await rest.json()) as { code: string; message: string; messageZh: string; selfDecision: string };
      expect(envelope).toMatchObject({ code: 'forbidden', selfDecision: 'own_organisation' });
      expect(envelope.messageZh).toContain('您所属的组织');
      expect(await packageOf(organisationId)).toBe('free');
      expect((await denials(admin, organisationId)).map((row) => [row.action, row.after])).toEqual([
        ['account:set-package:denied', { denied: 'own_organisation' }],
        ['account:set-package:denied', { denied: 'own_organisation' }],
      ]);
    }
    // Nor disable it.
    const disable = await admin.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "pause our keys") { id } }', { id: own });
    expect(disable.errors?.[0]?.extensions?.code).toBe('forbidden');
    expect((await denials(admin, own!)).at(-1)).toMatchObject({ action: 'account:disable:denied', after: { denied: 'own_organisation' } });

    // A staff member who does not belong to it may.
    const other = await seed(a).staff('support', 'outsider');
    const changed = await other.web.graphql<{ setAccountPackage: { planPackage: string } }>(
      'mutation($id: ID!) { setAccountPackage(accountId: $id, packageId: "enterprise", reason: "signed contract") { planPackage } }',
      { id: own },
    );
    expect(changed.data?.setAccountPackage).toEqual({ planPackage: 'enterprise' });
    const { rows } = await setup.database.query(`select actor_id, action, after from audit_log where target_id = $1 and action = 'account:set-package'`, [own]);
    expect(rows).toEqual([{ actor_id: other.id, action: 'account:set-package', after: { planPackage: 'enterprise', planPackageUntil: null } }]);
  });

  it('re-packaging their own account: 403 saying why, audited, unchanged', async () => {
    const support = await seed(a).staff('support', 'self-upgrade');
    const graph = await support.web.graphql('mutation($id: ID!) { setAccountPackage(accountId: $id, packageId: "max_x20", reason: "perks") { id } }', { id: support.id });
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'forbidden', status: 403 });
    expect(graph.errors?.[0]?.message).toContain('account:set-package cannot be applied to your own account');
    expect(await packageOf(support.id)).toBe('free');
    expect(await denials(support, support.id)).toEqual([{ action: 'account:set-package:denied', after: { denied: 'own_account' }, reason: expect.stringContaining('your own account') }]);
  });
});

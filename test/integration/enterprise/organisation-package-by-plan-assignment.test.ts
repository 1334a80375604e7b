/**
 * Issue 47 item 2: `account.plan_package` has one writer, the plan assignments, which audits each change.
 * An organisation is born on Free like every account; a staff approval onto another package is that writer's
 * change, so it is in the audit log on the organisation's own account (who, from what, to what), beside
 * the application's `application:approve`. A commercial start on Free changes no package and records none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { applyFor } from '../../helpers/enterprise.ts';
import { seed } from '../../helpers/seed.ts';

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

async function packageChanges(accountId: string): Promise<{ actor_id: string | null; before: unknown; after: unknown; reason: string; request_id: string | null }[]> {
  const { rows } = await setup.database.query(`select actor_id, before, after, reason, request_id from audit_log where target_id = $1 and action = 'account:set-package' order by id`, [accountId]);
  return rows;
}

describe("an organisation's package is the plan assignments' to write", () => {
  it('a staff approval onto a package is audited on the organisation as a package change by that staff member', async () => {
    const applicant = await seed(a).member({ tag: 'package-writer' });
    const reviewer = await seed(a).staff('support', 'package-writer-reviewer');
    const application = await applyFor(applicant, { kind: 'enterprise' });
    const approved = await reviewer.web.graphql<{ approveEnterpriseApplication: { organisationId: string; packageId: string } }>(
      'mutation($id: ID!) { approveEnterpriseApplication(id: $id, packageId: "max_x5", note: "Signed contract 42.") { organisationId packageId } }',
      { id: application.id },
    );
    expect(approved.errors).toBeUndefined();
    const { organisationId, packageId } = approved.data!.approveEnterpriseApplication;
    expect(packageId).toBe('max_x5');

    const { rows } = await setup.database.query('select plan_package, plan_package_until from account where id = $1', [organisationId]);
    expect(rows[0]).toEqual({ plan_package: 'max_x5', plan_package_until: null });
    expect(await packageChanges(organisationId)).toEqual([
      {
        actor_id: reviewer.id,
        before: { planPackage: 'free', planPackageUntil: null },
        after: { planPackage: 'max_x5', planPackageUntil: null },
        // The approval's note is the reason, in the words staff wrote (no English text svc made up).
        reason: 'Signed contract 42.',
        request_id: expect.stringMatching(/^mbr_/),
      },
    ]);
    // The application's own record of the decision is unchanged.
    const decision = await setup.database.query(`select actor_id, after from audit_log where target_id = $1 and action = 'application:approve'`, [application.id]);
    expect(decision.rows).toEqual([{ actor_id: reviewer.id, after: { state: 'approved', organisationId, packageId: 'max_x5' } }]);
  });

  it('a commercial organisation starts on Free: no package change, so no record of one', async () => {
    const owner = await seed(a).member({ tag: 'package-writer-free' });
    const { organisationId } = await applyFor(owner);
    const { rows } = await setup.database.query('select plan_package from account where id = $1', [organisationId]);
    expect(rows[0]).toEqual({ plan_package: 'free' });
    expect(await packageChanges(organisationId!)).toEqual([]);
  });
});

/**
 * Issue 46 item 1: an account owns at most `enterprise.maxOwnedOrganisations` organisations (default 3).
 * One more — by a commercial submit, a staff approval or an ownership hand-over — is a 409
 * `organisation_limit_reached` envelope that says so, and the limit holds under concurrent submits on two
 * instances sharing PostgreSQL and Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { addMember, applicationInput, applyFor, submitApplication } from '../../helpers/enterprise.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  setup = await realMode();
  const options = { config: { rateLimits: { ipPerMinute: 100_000 } } };
  a = await startApp(setup.config, options);
  b = await startApp(setup.config, options);
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await setup?.cleanup();
});

const verify = (accountId: string) => setup.database.query('update account set email_verified_at = now() where id = $1', [accountId]);

async function owned(person: Person): Promise<number> {
  const { rows } = await setup.database.query(`select count(*)::int as n from organisation_member where account_id = $1 and role = 'owner'`, [person.id]);
  return rows[0].n as number;
}

describe('at most three owned organisations', () => {
  it('the fourth commercial application is a 409 envelope naming the limit; nothing is created', async () => {
    const owner = await seed(a).member({ tag: 'three' });
    for (let n = 0; n < 3; n++) await applyFor(owner);
    const organisations = (await setup.database.query('select count(*)::int as n from organisation')).rows[0].n as number;

    const response = await owner.web.fetch('/api/membership/enterprise/applications', { body: applicationInput() });
    expect(response.status).toBe(409);
    expect(response.headers.get('x-svc-error-code')).toBe('organisation_limit_reached');
    const envelope = (await response.json()) as { ok: boolean; code: string; message: string; messageZh: string; owned: number; limit: number };
    expect(envelope).toMatchObject({ ok: false, code: 'organisation_limit_reached', owned: 3, limit: 3 });
    expect(envelope.message).toContain('already owns 3 organisations, the most one account may own (3)');
    expect(envelope.messageZh).toContain('上限（3 个）');
    // Over GraphQL the same, and an enterprise application is refused up front too.
    const graph = await submitApplication(owner, { kind: 'enterprise' });
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'organisation_limit_reached', status: 409 });
    expect(await owned(owner)).toBe(3);
    expect((await setup.database.query('select count(*)::int as n from organisation')).rows[0].n).toBe(organisations);
    const { rows } = await setup.database.query('select count(*)::int as n from enterprise_application where account_id = $1', [owner.id]);
    expect(rows[0].n).toBe(3);
  });

  it('eight submits at once on two instances make exactly three organisations', async () => {
    const owner = await seed(a).member({ tag: 'burst' });
    const at = [owner.web, owner.web.at(b.url)];
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, n) => at[n % 2]!.fetch('/api/membership/enterprise/applications', { body: applicationInput({ organisation: `Burst ${owner.id.slice(0, 8)} ${n}` }) })),
    );
    const statuses = results.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    for (const response of results.filter((entry) => entry.status === 409)) expect(((await response.json()) as { code: string }).code).toBe('organisation_limit_reached');
    expect(await owned(owner)).toBe(3);
  });

  it('staff approval and an ownership hand-over count too: neither makes a fourth', async () => {
    const applicant = await seed(a).member({ tag: 'approval' });
    const support = await seed(b).staff('support');
    await applyFor(applicant);
    await applyFor(applicant);
    const pending = await applyFor(applicant, { kind: 'enterprise' });
    expect(pending.state).toBe('pending_review');

    // Someone hands their organisation over: the applicant owns three now (allowed).
    const giver = await seed(a).member({ tag: 'giver' });
    const { organisationId: given } = await applyFor(giver);
    await addMember(giver, given!, applicant, 'admin', verify);
    const handOver = (from: Person, organisationId: string) =>
      from.web.graphql('mutation($org: ID!, $id: ID!) { setOrganisationMemberRole(organisationId: $org, accountId: $id, role: owner) { role } }', { org: organisationId, id: applicant.id });
    expect((await handOver(giver, given!)).errors).toBeUndefined();
    expect(await owned(applicant)).toBe(3);

    // Staff approving the pending application would make a fourth: 409, and it stays pending.
    const approved = await support.web.graphql('mutation($id: ID!) { approveEnterpriseApplication(id: $id) { id } }', { id: pending.id });
    expect(approved.errors?.[0]?.extensions).toMatchObject({ code: 'organisation_limit_reached', status: 409 });
    const { rows } = await setup.database.query('select state, organisation_id from enterprise_application where id = $1', [pending.id]);
    expect(rows[0]).toEqual({ state: 'pending_review', organisation_id: null });

    // A second hand-over is refused the same way; the giver stays owner.
    const other = await seed(a).member({ tag: 'giver-two' });
    const { organisationId: second } = await applyFor(other);
    await addMember(other, second!, applicant, 'member', verify);
    const refused = await handOver(other, second!);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'organisation_limit_reached', status: 409 });
    const roles = await setup.database.query('select account_id, role from organisation_member where organisation_id = $1 order by role', [second]);
    expect(roles.rows).toEqual([
      { account_id: applicant.id, role: 'member' },
      { account_id: other.id, role: 'owner' },
    ]);
    expect(await owned(applicant)).toBe(3);
  });
});

/**
 * Issue 46 item 1: a commercial application is approved on submit, and its organisation starts on Free —
 * Free's pools, not the enterprise package's (price 0, ×50) — so its keys get exactly what a free member
 * gets, and a burst past Free's premium day pool is refused with 402 as a free member's would be. Staff are
 * the only way onto a price-0 package: organisations auto-approved before the rule move to Free in a
 * migration, while a package staff chose since stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { realMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { applyFor, organisationKey } from '../../helpers/enterprise.ts';
import { seed } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let upstream: ScriptedUpstream;
let a: TestApp;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  setup = await realMode();
  a = await startApp(setup.config, { config: { rateLimits: { ipPerMinute: 100_000 } }, env: { SVC_UPSTREAM_URL: upstream.url } });
});

afterAll(async () => {
  await a?.close();
  await upstream?.close();
  await setup?.cleanup();
});

interface UsageJson {
  packageId: string;
  pools: { class: string; window: string; limit: { amountMicros: number }; used: { amountMicros: number } }[];
}

const limits = (usage: UsageJson) => Object.fromEntries(usage.pools.map((pool) => [`${pool.class}/${pool.window}`, pool.limit.amountMicros]));

/** Free's premium pool for a day: $0.05 (DESIGN §4). */
const freePremiumDayMicros = 50_000;

describe('a commercial organisation starts on Free', () => {
  it("is approved on submit onto the free package, with exactly Free's pools", async () => {
    const owner = await seed(a).member({ tag: 'commercial-free' });
    const application = await applyFor(owner);
    expect(application).toMatchObject({ state: 'approved', autoApproved: true, packageId: 'free' });
    const organisationId = application.organisationId!;

    const { rows } = await setup.database.query('select kind, plan_package from account where id = $1', [organisationId]);
    expect(rows[0]).toEqual({ kind: 'organisation', plan_package: 'free' });
    const organisation = (await (await owner.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/usage`)).json()) as UsageJson;
    const member = (await (await owner.web.fetch('/api/membership/usage')).json()) as UsageJson;
    expect(organisation.packageId).toBe('free');
    expect(member.packageId).toBe('free');
    expect(limits(organisation)).toEqual(limits(member));
    expect(limits(organisation)).toMatchObject({ 'fast/day': 200_000, 'premium/day': freePremiumDayMicros });
  });

  it("a burst past Free's premium day pool through the organisation's key gets 402 quota_exceeded", async () => {
    const owner = await seed(a).member({ tag: 'commercial-burst' });
    const { organisationId } = await applyFor(owner);
    const token = await organisationKey(owner, organisationId!);
    // Each turn bills 8,000 output tokens of svc-2.1 (0.2175 micros a token after the promotion): ~1,740
    // micros, so Free's $0.05 covers about 28 of them; the enterprise package's would cover thousands.
    const body = JSON.stringify({
      model: 'svc-2.1',
      max_tokens: 8000,
      messages: [{ role: 'user', content: '#script {"usageOverride":{"prompt_tokens":20,"completion_tokens":8000}}\nsummarise the manual' }],
    });
    const statuses: number[] = [];
    const codes = new Set<string>();
    for (let turn = 0; turn < 40; turn++) {
      const response = await fetch(`${a.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
      statuses.push(response.status);
      if (response.status !== 200) codes.add(((await response.json()) as { code: string }).code);
      else await response.arrayBuffer();
    }
    const admitted = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status === 402).length, statuses.join(',')).toBeGreaterThan(0);
    expect([...codes]).toEqual(['quota_exceeded']);
    expect(admitted).toBeLessThanOrEqual(Math.ceil(freePremiumDayMicros / 1_740));

    // What was billed stays within Free's premium day pool, on the organisation, not the owner.
    await settled(a);
    const { rows } = await setup.database.query('select count(*)::int as n, coalesce(sum(cost_micros), 0)::bigint as spent from usage_ledger where payer_id = $1', [organisationId]);
    expect(rows[0].n).toBe(admitted);
    expect(Number(rows[0].spent)).toBeLessThanOrEqual(freePremiumDayMicros);
    expect((await setup.database.query('select count(*)::int as n from usage_ledger where payer_id = $1', [owner.id])).rows[0].n).toBe(0);
  });
});

describe('the migration', () => {
  it('moves organisations auto-approved onto a free package to Free, audited; a package staff chose stays', async () => {
    const owner = await seed(a).member({ tag: 'migrated' });
    const repackaged = await seed(a).member({ tag: 'staff-chose' });
    const old = (await applyFor(owner)).organisationId!;
    const chosen = (await applyFor(repackaged)).organisationId!;
    // What auto-approval did before: the organisation on enterprise, recorded on its application.
    await setup.database.query(`update enterprise_application set package_id = 'enterprise' where organisation_id = any($1)`, [[old, chosen]]);
    await setup.database.query(`update account set plan_package = 'enterprise' where id = $1`, [old]);
    // And one that staff moved to max_x5 since.
    await setup.database.query(`update account set plan_package = 'max_x5' where id = $1`, [chosen]);

    const { migrator } = a.app.services.db.orm;
    await migrator.down({ to: 'Migration20261124160000_leases' });
    await migrator.up();

    const { rows } = await setup.database.query('select id, plan_package from account where id = any($1) order by plan_package', [[old, chosen]]);
    expect(rows).toEqual([
      { id: old, plan_package: 'free' },
      { id: chosen, plan_package: 'max_x5' },
    ]);
    const audit = await setup.database.query(`select actor_id, action, before, after, reason from audit_log where target_id = any($1)`, [[old, chosen]]);
    expect(audit.rows).toEqual([
      {
        actor_id: null,
        action: 'account:set-package',
        before: { planPackage: 'enterprise', planPackageUntil: null },
        after: { planPackage: 'free', planPackageUntil: null },
        reason: expect.stringContaining('Commercial organisations start on Free'),
      },
    ]);
  });
});

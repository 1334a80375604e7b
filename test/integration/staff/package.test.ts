/**
 * Changing an account's plan package (PlanAssignments), on two instances: staff on instance A put a member
 * on a package and instance B's `/v1/models` and `/api/membership/usage` follow at once (the credential
 * cache is invalidated everywhere); a time-limited package returns to Free when it ends; payments' system
 * path is audited without an actor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;

// Free may use two models, so a package change shows in /v1/models.
const plans = { ...defaultPlans, free: { ...defaultPlans.free, models: ['auto', 'svc-2.1-fast'] } };

beforeAll(async () => {
  setup = await realMode();
  a = await startApp(setup.config, { config: { plans } });
  b = await startApp(setup.config, { config: { plans } });
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await setup?.cleanup();
});

async function modelIds(base: string, token: string): Promise<string[]> {
  const response = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { id: string }[] }).data.map((model) => model.id);
}

async function usage(base: string, token: string): Promise<{ packageId: string; fastDay: number }> {
  const response = await fetch(`${base}/api/membership/usage`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { packageId: string; pools: { class: string; window: string; limit: { amountMicros: number } }[] };
  return { packageId: body.packageId, fastDay: body.pools.find((pool) => pool.class === 'fast' && pool.window === 'day')!.limit.amountMicros };
}

describe('plan package assignment', () => {
  it('staff on A change the package; B serves the new models and pools at once; the end returns it to Free', async () => {
    const support = await seed(a).staff('support');
    const member = await seed(a).member({ tag: 'upgraded' });
    const key = await member.key();
    expect(await modelIds(b.url, key)).toEqual(['auto', 'svc-2.1-fast']);
    expect(await usage(b.url, key)).toEqual({ packageId: 'free', fastDay: 200_000 });

    const until = new Date(Date.now() + 3_600_000);
    const changed = await support.web.graphql<{ setAccountPackage: { planPackage: string; planPackageUntil: string } }>(
      'mutation($id: ID!, $until: DateTime) { setAccountPackage(accountId: $id, packageId: "max_x5", reason: "conference speaker", until: $until) { planPackage planPackageUntil } }',
      { id: member.id, until: until.toISOString() },
    );
    expect(changed.data?.setAccountPackage).toEqual({ planPackage: 'max_x5', planPackageUntil: until.toISOString() });
    expect(await modelIds(b.url, key)).toEqual(b.app.services.models.ids);
    expect(await usage(b.url, key)).toEqual({ packageId: 'max_x5', fastDay: 15_000_000 });

    // An hour later (the job runs every minute on every instance; here it is asked for that moment).
    expect(await a.app.services.planAssignments.expire(new Date(until.getTime() + 1000))).toBe(1);
    expect(await usage(b.url, key)).toEqual({ packageId: 'free', fastDay: 200_000 });
    expect(await modelIds(b.url, key)).toEqual(['auto', 'svc-2.1-fast']);
    expect(await a.app.services.planAssignments.expire(new Date(until.getTime() + 1000))).toBe(0);

    const { rows } = await setup.database.query('select actor_id, action, reason, before, after from audit_log where target_id = $1 order by id', [member.id]);
    expect(rows).toEqual([
      {
        actor_id: support.id,
        action: 'account:set-package',
        reason: 'conference speaker',
        before: { planPackage: 'free', planPackageUntil: null },
        after: { planPackage: 'max_x5', planPackageUntil: until.toISOString() },
      },
      {
        actor_id: null,
        action: 'account:set-package',
        reason: 'The package period ended.',
        before: { planPackage: 'max_x5', planPackageUntil: until.toISOString() },
        after: { planPackage: 'free', planPackageUntil: null },
      },
    ]);
  });

  it('REST does the same; unknown packages, past ends and missing reasons are 400s naming the field', async () => {
    const admin = await seed(a).staff('admin');
    const member = await seed(a).member({ tag: 'rest-package' });
    const key = await member.key();
    const path = `/api/membership/staff/accounts/${member.id}/package`;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ packageId: 'platinum', reason: 'x' }, 'packageId', /Unknown package "platinum"; the packages are free, pro, max_x5, max_x20/],
      [{ packageId: 'pro', reason: 'x', until: '2001-01-01T00:00:00Z' }, 'until', /future/],
      [{ packageId: 'pro', reason: 'x', until: 'next tuesday' }, 'until', /ISO 8601/],
      [{ packageId: 'pro' }, 'reason', /reason is required/],
      [{ packageId: 'pro', reason: 'x'.repeat(501) }, 'reason', /at most 500/],
    ];
    for (const [body, param, message] of cases) {
      const response = await admin.web.fetch(path, { body });
      expect(response.status, param).toBe(400);
      expect(await response.json(), param).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(message), error: { param } });
    }
    const response = await admin.web.fetch(path, { body: { packageId: 'pro', reason: 'support ticket 1234' } });
    expect(await response.json()).toMatchObject({ ok: true, account: { id: member.id, planPackage: 'pro', planPackageUntil: null } });
    expect(await usage(b.url, key)).toEqual({ packageId: 'pro', fastDay: 3_000_000 });
    // Nobody gives themselves a package.
    const self = await admin.web.fetch(`/api/membership/staff/accounts/${admin.id}/package`, { body: { packageId: 'max_x20', reason: 'me' } });
    expect(self.status).toBe(403);
  });

  it('the job returns an ended package to Free by itself', async () => {
    const member = await seed(a).member({ tag: 'trial' });
    const key = await member.key();
    await a.app.services.planAssignments.assignAsSystem(member.id, 'pro', { reason: 'A short trial.', until: new Date(Date.now() + 300) });
    expect(await usage(b.url, key)).toMatchObject({ packageId: 'pro' });
    // The job runs every minute; here every 100 ms.
    const job = a.app.services.planAssignments;
    await job.close();
    job.start(100);
    const deadline = Date.now() + 5000;
    while ((await usage(b.url, key)).packageId !== 'free') {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await modelIds(b.url, key)).toEqual(['auto', 'svc-2.1-fast']);
  });

  it('payments assign as the system: no actor, audited, effective at once', async () => {
    const member = await seed(a).member({ tag: 'paid' });
    const key = await member.key();
    expect(await usage(b.url, key)).toMatchObject({ packageId: 'free' });
    const account = await a.app.services.planAssignments.assignAsSystem(member.id, 'max_x20', { reason: 'Order ord_123 paid.', requestId: 'mbr_paymentnotice1' });
    expect(account).toMatchObject({ id: member.id, planPackage: 'max_x20' });
    expect(await usage(b.url, key)).toEqual({ packageId: 'max_x20', fastDay: 60_000_000 });
    const { rows } = await setup.database.query('select actor_id, reason, request_id from audit_log where target_id = $1', [member.id]);
    expect(rows).toEqual([{ actor_id: null, reason: 'Order ord_123 paid.', request_id: 'mbr_paymentnotice1' }]);
  });
});

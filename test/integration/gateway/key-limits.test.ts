/**
 * Per-key limits (issue 51 item 1) on real PostgreSQL and Redis: a key's day cap admits exactly the
 * requests its reservations fit, across two instances hammering it at once (no lease lets it overshoot);
 * the key's rpm cap, model allow-list and expiry are refused with envelopes naming the key's limit; REST
 * and GraphQL set and show them; embedded mode (pools in SQL) holds the cap too.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { embeddedMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { applyFor } from '../../helpers/enterprise.ts';
import { seed } from '../../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { ledgerRows, relaxedLimits, startHarness, type Harness } from './harness.ts';

const k = 5;
const maxTokens = 2000;
const params = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'Count to three. #key-cap' }], max_tokens: maxTokens };
const requestBytes = Buffer.byteLength(JSON.stringify(params));
// Fast class at 70 % off: 42,000 / 84,000 micros per 1M tokens (see quota.test.ts).
const reservation = Math.ceil((requestBytes * 42_000 + maxTokens * 84_000) / 1_000_000);
// Room for k reservations and half of another.
const dayCap = k * reservation + Math.floor(reservation / 2);

// Pools and the plan's rpm far above anything here: only the key's own limits can refuse.
const plans = {
  ...defaultPlans,
  free: {
    name: 'Free',
    requestsPerMinute: 100_000,
    pools: { fast: { day: 100, week: 100, month: 100 }, premium: { day: 100, week: 100, month: 100 } },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
};

type ApiError = InstanceType<typeof OpenAI.APIError>;
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok' as const,
    (error: unknown) => error as ApiError,
  );

interface KeyJson {
  id: string;
  limits: { budgetDay: { amountMicros: number } | null; budgetMonth: { amountMicros: number } | null; requestsPerMinute: number | null; models: string[] | null; expiresAt: string | null; spentToday: { amountMicros: number } };
}

let h: Harness;
let second: TestApp;

beforeAll(async () => {
  // A slow upstream: every reservation is made before the first one settles.
  h = await startHarness({ config: { plans }, upstream: { defaults: { latencyMs: 3000 } } });
  second = await startApp(h.mode.config, { config: { ...relaxedLimits, plans }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
});
afterAll(async () => {
  await second?.close();
  await h?.close();
});

describe('a key with a daily spend cap', () => {
  it(`admits exactly ${k} of 120 simultaneous requests across two instances, never billing past the cap`, async () => {
    const member = await seed(h.app).member();
    const created = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'capped', budgetDay: formatMicros(dayCap) } });
    expect(created.status).toBe(201);
    const { token, limits } = (await created.json()) as { token: string } & KeyJson;
    expect(limits.budgetDay?.amountMicros).toBe(dayCap);
    const uncapped = await member.key('uncapped');

    const clients = [h.app.url, second.url].map((url) => new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0 }));
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const before = h.upstream.stats.requests;
    const attempts = Array.from({ length: 120 }, async (_, i) => {
      await barrier;
      return outcome(clients[i % 2]!.chat.completions.create(params));
    });
    release();
    const results = await Promise.all(attempts);
    expect(results.filter((r) => r === 'ok')).toHaveLength(k);
    const refused = results.filter((r): r is ApiError => r !== 'ok');
    for (const error of refused) {
      expect(error.status).toBe(402);
      expect(error.code).toBe('key_budget_exceeded');
      expect(error.message).toMatch(/API key's daily spend cap/);
    }
    expect(h.upstream.stats.requests - before).toBe(k);

    const rows = await ledgerRows(h.database, member.id, k);
    expect(rows).toHaveLength(k);
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    expect(billed).toBeLessThanOrEqual(dayCap);
    for (const row of rows) expect(Number(row.reserved_micros)).toBe(reservation);

    // The account's pool is far from empty: the member's other key still works.
    const other = new OpenAI({ apiKey: uncapped, baseURL: `${second.url}/v1`, maxRetries: 0 });
    await expect(other.chat.completions.create({ ...params, max_tokens: 5 })).resolves.toBeTruthy();

    // Settled: the key's counter is what the ledger billed, so small requests fit again up to the cap, and
    // the keys page shows today's spend against the cap.
    await settled(h.app, second);
    const listed = (await (await member.web.fetch('/api/membership/auth/api-keys')).json()) as { keys: (KeyJson & { name: string })[] };
    const capped = listed.keys.find((key) => key.name === 'capped')!;
    expect(capped.limits.spentToday.amountMicros).toBe(billed);
    const left = dayCap - billed;
    const small = await outcome(clients[1]!.chat.completions.create({ ...params, max_tokens: 1 }));
    const smallCost = Math.ceil((Buffer.byteLength(JSON.stringify({ ...params, max_tokens: 1 })) * 42_000 + 84_000) / 1_000_000);
    expect(small === 'ok').toBe(smallCost <= left);

    // Raising the cap takes effect at once on every instance.
    const raised = await member.web.fetch(`/api/membership/auth/api-keys/${capped.id}`, { method: 'PATCH', body: { budgetDay: null } });
    expect(raised.status).toBe(200);
    await expect(clients[0]!.chat.completions.create(params)).resolves.toBeTruthy();
  }, 60_000);
});

describe('the other limits of a key', () => {
  it("refuses past the key's rpm with 429 key_rate_limited and Retry-After", async () => {
    const member = await seed(h.app).member();
    const created = await member.web.graphql<{ createApiKey: { token: string; key: KeyJson } }>(
      'mutation($limits: KeyLimitsInput) { createApiKey(name: "rpm", limits: $limits) { token key { id limits { requestsPerMinute } } } }',
      { limits: { requestsPerMinute: 3 } },
    );
    expect(created.errors).toBeUndefined();
    expect(created.data!.createApiKey.key.limits.requestsPerMinute).toBe(3);
    const client = new OpenAI({ apiKey: created.data!.createApiKey.token, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    await Promise.all([0, 1, 2].map(() => client.chat.completions.create({ ...params, max_tokens: 5 })));
    const refused = await outcome(client.chat.completions.create({ ...params, max_tokens: 5 }));
    expect(refused).not.toBe('ok');
    const error = refused as ApiError;
    expect(error.status).toBe(429);
    expect(error.code).toBe('key_rate_limited');
    expect(error.message).toMatch(/cap of 3 requests per minute/);
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it("refuses a key's rpm above the plan's with a 400 naming the field", async () => {
    const member = await seed(h.app).member();
    const response = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'too fast', requestsPerMinute: 100_001 } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; error: { param: string; message: string }; messageZh: string };
    expect(body.code).toBe('invalid_request');
    expect(body.error.param).toBe('requestsPerMinute');
    expect(body.error.message).toMatch(/above your plan's limit of 100000/);
    expect(body.messageZh).toMatch(/100000/);
  });

  it('refuses a model outside the allow-list with 403 key_model_not_allowed, and lets the listed one through', async () => {
    const member = await seed(h.app).member();
    const response = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'fast only', models: ['svc-2.1-fast'] } });
    const { token } = (await response.json()) as { token: string };
    const client = new OpenAI({ apiKey: token, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    await expect(client.chat.completions.create({ ...params, max_tokens: 5 })).resolves.toBeTruthy();
    const refused = (await outcome(client.chat.completions.create({ ...params, model: 'svc-2.1', max_tokens: 5 }))) as ApiError;
    expect(refused.status).toBe(403);
    expect(refused.code).toBe('key_model_not_allowed');
    expect(refused.message).toMatch(/allow-list is svc-2\.1-fast/);
  });

  it('refuses an expired key with 401 key_expired; an expiry in the past cannot be set', async () => {
    const member = await seed(h.app).member();
    const bad = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'past', expiresAt: '2020-01-01' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('expiresAt');
    const response = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'soon', expiresAt: '2099-01-31' } });
    const { token, id, limits } = (await response.json()) as { token: string } & KeyJson;
    expect(limits.expiresAt).toBe('2099-02-01T00:00:00.000Z');
    const client = new OpenAI({ apiKey: token, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    await expect(client.chat.completions.create({ ...params, max_tokens: 5 })).resolves.toBeTruthy();
    // Time passes: the expiry is now behind us (set in the database, as the API refuses past dates).
    await h.database.query(`update api_key set expires_at = now() - interval '1 second' where id = $1`, [id]);
    await h.app.app.services.identity.invalidate({ tokenHashes: [(await h.database.query('select token_hash from api_key where id = $1', [id])).rows[0].token_hash as string] });
    const refused = (await outcome(client.chat.completions.create({ ...params, max_tokens: 5 }))) as ApiError;
    expect(refused.status).toBe(401);
    expect(refused.code).toBe('key_expired');
    expect(refused.message).toMatch(/expired at/);
  });

  it('sets and lifts limits over GraphQL (updateApiKey) and on organisation keys (REST PATCH, updateOrganisationKey)', async () => {
    const member = await seed(h.app).member();
    const created = await member.web.graphql<{ createApiKey: { key: { id: string } } }>('mutation { createApiKey(name: "g") { key { id } } }');
    const id = created.data!.createApiKey.key.id;
    const updated = await member.web.graphql<{ updateApiKey: KeyJson }>(
      'mutation($id: ID!) { updateApiKey(id: $id, limits: { budgetDay: "5", budgetMonth: "50.5", models: ["svc-2.1-fast"] }) { id limits { budgetDay { amountMicros } budgetMonth { amountMicros } models spentToday { amountMicros } } } }',
      { id },
    );
    expect(updated.errors).toBeUndefined();
    expect(updated.data!.updateApiKey.limits).toMatchObject({ budgetDay: { amountMicros: 5_000_000 }, budgetMonth: { amountMicros: 50_500_000 }, models: ['svc-2.1-fast'], spentToday: { amountMicros: 0 } });
    const inverted = await member.web.graphql('mutation($id: ID!) { updateApiKey(id: $id, limits: { budgetDay: "60" }) { id } }', { id });
    expect(inverted.errors?.[0]?.extensions?.code).toBe('invalid_request');
    const lifted = await member.web.graphql<{ updateApiKey: KeyJson }>('mutation($id: ID!) { updateApiKey(id: $id, limits: { budgetDay: null, models: null }) { limits { budgetDay { amountMicros } budgetMonth { amountMicros } models } } }', { id });
    expect(lifted.data!.updateApiKey.limits).toMatchObject({ budgetDay: null, budgetMonth: { amountMicros: 50_500_000 }, models: null });

    const owner = await seed(h.app).member({ tag: 'org-owner' });
    const { organisationId } = await applyFor(owner);
    const base = `/api/membership/enterprise/organisations/${organisationId}/keys`;
    const minted = await owner.web.fetch(base, { body: { name: 'backend', budgetMonth: 2, requestsPerMinute: 10 } });
    expect(minted.status).toBe(201);
    const key = (await minted.json()) as { token: string } & KeyJson;
    expect(key.limits).toMatchObject({ budgetMonth: { amountMicros: 2_000_000 }, requestsPerMinute: 10 });
    const patched = await owner.web.fetch(`${base}/${key.id}`, { method: 'PATCH', body: { budgetDay: '0.000001' } });
    expect(patched.status).toBe(200);
    // One micro a day: any request's worst case is more, so the organisation key is refused by its own cap.
    const client = new OpenAI({ apiKey: key.token, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    const refused = (await outcome(client.chat.completions.create({ ...params, max_tokens: 5 }))) as ApiError;
    expect(refused.status).toBe(402);
    expect(refused.code).toBe('key_budget_exceeded');
    const viaGraphQL = await owner.web.graphql<{ updateOrganisationKey: KeyJson }>(
      'mutation($org: ID!, $id: ID!) { updateOrganisationKey(organisationId: $org, id: $id, limits: { budgetDay: null }) { limits { budgetDay { amountMicros } requestsPerMinute } } }',
      { org: organisationId, id: key.id },
    );
    expect(viaGraphQL.data!.updateOrganisationKey.limits).toMatchObject({ budgetDay: null, requestsPerMinute: 10 });
    await expect(client.chat.completions.create({ ...params, max_tokens: 5 })).resolves.toBeTruthy();
  });
});

describe('embedded mode (pools in SQL)', () => {
  let upstream: ScriptedUpstream;
  let app: TestApp;
  const mode = embeddedMode();
  beforeAll(async () => {
    upstream = await startScriptedUpstream({ defaults: { latencyMs: 1500 } });
    app = await startApp(mode.config, { config: { ...relaxedLimits, plans }, env: { SVC_UPSTREAM_URL: upstream.url } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await mode.cleanup();
  });

  it(`admits exactly ${k} of 30 simultaneous requests on a capped key`, async () => {
    const member = await seed(app).member();
    const { key, token } = await app.app.services.apiKeys.createForAccount(member.id, { name: 'capped', budgetMonth: formatMicros(dayCap) });
    expect(key.limits.budgetMonth?.amountMicros).toBe(dayCap);
    const client = new OpenAI({ apiKey: token, baseURL: `${app.url}/v1`, maxRetries: 0 });
    const results = await Promise.all(Array.from({ length: 30 }, () => outcome(client.chat.completions.create(params))));
    expect(results.filter((r) => r === 'ok')).toHaveLength(k);
    for (const error of results.filter((r): r is ApiError => r !== 'ok')) expect(error.code).toBe('key_budget_exceeded');
    expect(upstream.stats.requests).toBe(k);
  }, 60_000);
});

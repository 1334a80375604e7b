/**
 * A key's spend caps hold whichever source pays (issue 51): on real PostgreSQL and Redis, a capped key of a
 * payer whose pool is exhausted and who pays from prepaid credit admits exactly the requests whose
 * worst cases fit under the cap, however many arrive at once on two instances, and is refused past it with
 * the key's own 402 key_budget_exceeded, as a pool-paid key is; its turns' settlement gives the unused
 * part of the cap back. In embedded mode (caps counted in SQL) too. A quote for the key reads what it has
 * spent or holds: it says the body would be refused, with the very error the request then gets. A credit-paid
 * turn whose instance died gives its cap hold back when the sweeper ends its credit hold.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { embeddedMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';
import { StuckStream } from '../../helpers/stuck-stream.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { ledgerRows, relaxedLimits, startHarness, type Harness } from '../gateway/harness.ts';

const k = 5;
const maxTokens = 2000;
const params = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'Count to three. #key-cap-credit' }], max_tokens: maxTokens };
const requestBytes = Buffer.byteLength(JSON.stringify(params));
// Credit pays at list price: fast class 140,000 / 280,000 micros per 1M tokens (70 % off in pools).
const listReserve = Math.ceil((requestBytes * 140_000 + maxTokens * 280_000) / 1_000_000);
// Room for k credit-paid worst cases and half of another.
const dayCap = k * listReserve + Math.floor(listReserve / 2);

// The fast pools are far too small for any request here (every turn meets the exhausted-pool path); the
// plan's rpm is far above anything here: only the key's cap can refuse a credit-paid turn.
const plans = {
  ...defaultPlans,
  free: {
    name: 'Free',
    requestsPerMinute: 100_000,
    pools: { fast: { day: 0.0001, week: 100, month: 100 }, premium: { day: 100, week: 100, month: 100 } },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
};
// Pools large enough for the quote test's pool-paid turns.
const roomyPlans = { ...plans, free: { ...plans.free, pools: { fast: { day: 100, week: 100, month: 100 }, premium: { day: 100, week: 100, month: 100 } } } };

type ApiError = InstanceType<typeof OpenAI.APIError>;
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok' as const,
    (error: unknown) => error as ApiError,
  );

/** A member who opted in to pay from credit, with 10 USD of it, and a key with `cap` (day or month). */
async function creditPayer(app: TestApp, cap: { budgetDay?: string; budgetMonth?: string }): Promise<{ memberId: string; token: string }> {
  const member = await seed(app).member();
  const ledger = app.app.services.creditLedger;
  const added = await ledger.append({ accountId: member.id, amountMicros: 10_000_000, kind: 'adjustment', reference: null, note: 'test' });
  expect(added.ok).toBe(true);
  await ledger.setPayFromCredit(member.id, true);
  const { token } = await app.app.services.apiKeys.createForAccount(member.id, { name: 'capped', ...cap });
  return { memberId: member.id, token };
}

describe('a capped key paid from credit (Redis, two instances)', () => {
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

  it(`admits exactly ${k} of 40 simultaneous requests, never spending past the cap, the rest refused naming the key's cap`, async () => {
    const { memberId, token } = await creditPayer(h.app, { budgetDay: formatMicros(dayCap) });
    const clients = [h.app.url, second.url].map((url) => new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0 }));
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const before = h.upstream.stats.requests;
    const attempts = Array.from({ length: 40 }, async (_, i) => {
      await barrier;
      return outcome(clients[i % 2]!.chat.completions.create(params));
    });
    release();
    const results = await Promise.all(attempts);
    expect(results.filter((r) => r === 'ok')).toHaveLength(k);
    for (const error of results.filter((r): r is ApiError => r !== 'ok')) {
      expect(error.code).toBe('key_budget_exceeded');
      expect(error.status).toBe(402);
      expect(error.message).toMatch(/API key's daily spend cap/);
    }
    expect(h.upstream.stats.requests - before).toBe(k);

    await settled(h.app, second);
    const rows = await ledgerRows(h.database, memberId, k);
    expect(rows).toHaveLength(k);
    for (const row of rows) expect(row).toMatchObject({ paid_from_credit: true, reserved_micros: String(listReserve) });
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    expect(billed).toBeLessThanOrEqual(dayCap);
    const spends = await h.database.query(`select count(*)::int as n from credit_entry where account_id = $1 and kind = 'spend'`, [memberId]);
    expect((spends.rows[0] as { n: number }).n).toBe(k);

    // Settled: the key's counter is what the ledger billed (the unused worst cases came back).
    const windows = h.app.app.services.windows.current();
    const keyId = (rows[0] as unknown as { credential_id: string }).credential_id;
    await expect(h.app.app.services.pools.readKeyCap!(keyId, memberId, windows)).resolves.toMatchObject({ day: billed });
  }, 60_000);
});

describe('a capped key paid from credit whose instance died (Redis)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ config: { plans } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("the sweeper that ends the credit hold gives the key's cap back too; the late owner moves nothing", async () => {
    const { memberId, token } = await creditPayer(h.app, { budgetDay: '0.01' });
    const services = h.app.app.services;
    const principal = await services.identity.authenticateBearer(`Bearer ${token}`);
    const model = services.registry.get('svc-2.1-fast')!;
    // Its pool-paid worst case (70 % off) is past the 0.0001 USD fast day pool too: credit pays it.
    const worstCase = { inputTokens: 100, outputTokens: 10_000 };
    const reserve = Math.ceil((100 * 140_000 + 10_000 * 280_000) / 1_000_000);
    const stuck = new StuckStream();
    const origin = { ip: '203.0.113.9', traceId: `mbr_capdied${Date.now()}`, clientRequestId: null };
    const late = services.pipeline.run(principal, { executor: stuck, product: 'chat', model, stream: false, worstCase, call: { produced: { inputTokens: 10, outputTokens: 10 } } }, origin);
    const windows = services.windows.current();
    const keyId = principal.credential.id;
    // Admitted once its credit is held (the cap is held just before): only then is there a hold to sweep.
    const deadline = Date.now() + 3000;
    const creditHeld = async () => (await h.database.query('select 1 from credit_hold where account_id = $1', [memberId])).rows.length > 0;
    while (!(await creditHeld()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await services.pools.readKeyCap!(keyId, memberId, windows)).day).toBe(reserve);

    const past = Date.now() + h.app.config.gateway.reservationTtlSeconds * 1000 + 60_000;
    await services.sweeper.sweep(past);
    // Nothing delivered: billed 0, the whole hold back on the cap.
    expect((await services.pools.readKeyCap!(keyId, memberId, windows)).day).toBe(0);

    stuck.finish();
    await late.catch(() => undefined);
    await settled(h.app);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await services.pools.readKeyCap!(keyId, memberId, windows)).day).toBe(0);
  }, 30_000);
});

describe('a quote for a capped key', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ config: { plans: roomyPlans }, upstream: { defaults: { latencyMs: 2000 } } });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function quote(token: string, body: unknown): Promise<Record<string, any>> {
    const response = await fetch(`${h.app.url}/api/membership/v1/quote`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: 'chat.completions', body }),
    });
    const json = (await response.json()) as { quote: Record<string, any> };
    expect(response.status, JSON.stringify(json)).toBe(200);
    return json.quote;
  }

  it("reads what the key holds: refused by the cap's remainder, with the error the request then gets", async () => {
    const member = await seed(h.app).member();
    const fresh = await quote(await member.key('probe'), params);
    const reservation = fresh.reservation.amountMicros as number;
    const cap = reservation + Math.floor(reservation / 2);
    const { token } = await h.app.app.services.apiKeys.createForAccount(member.id, { name: 'capped', budgetDay: formatMicros(cap) });

    const empty = await quote(token, params);
    expect(empty).toMatchObject({ fits: true, keyCapRefusal: null, keyCaps: [{ window: 'day', limit: { amountMicros: cap }, used: { amountMicros: 0 }, remaining: { amountMicros: cap }, fits: true }] });

    // One request in flight holds its worst case on the cap: half a worst case is left.
    const client = new OpenAI({ apiKey: token, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    const running = outcome(client.chat.completions.create(params));
    let near = await quote(token, params);
    for (const deadline = Date.now() + 1500; near.keyCaps[0].used.amountMicros === 0 && Date.now() < deadline; ) near = await quote(token, params);
    expect(near.keyCaps[0]).toMatchObject({ used: { amountMicros: reservation }, remaining: { amountMicros: cap - reservation }, fits: false });
    expect(near.fits).toBe(false);
    expect(near.keyCapRefusal).toMatchObject({ code: 'key_budget_exceeded', status: 402, details: { keyLimit: 'budget_day' } });

    // The same body sent for real: refused identically.
    const raw = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(params),
    });
    const envelope = (await raw.json()) as { error: { code: string; message: string } };
    expect(raw.status).toBe(near.keyCapRefusal.status);
    expect(envelope.error).toMatchObject({ code: near.keyCapRefusal.code, message: near.keyCapRefusal.message });
    expect(await running).toBe('ok');

    // Over GraphQL too.
    const graphql = await fetch(`${h.app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query Q($body: JSON!) { quote(endpoint: chat_completions, body: $body) { fits keyCaps { window used { amountMicros } remaining { amountMicros } fits } keyCapRefusal { code } } }', variables: { body: { ...params, max_tokens: 100_000 } } }),
    });
    const { data } = (await graphql.json()) as { data: { quote: { fits: boolean; keyCaps: unknown[]; keyCapRefusal: { code: string } | null } } };
    expect(data.quote.keyCapRefusal).toEqual({ code: 'key_budget_exceeded' });
    expect(data.quote.fits).toBe(false);
  }, 30_000);
});

describe('a capped key paid from credit (embedded mode, caps in SQL)', () => {
  let upstream: ScriptedUpstream;
  let app: TestApp;
  const mode = embeddedMode();
  beforeAll(async () => {
    // Slow enough that every admission (serialised on the embedded database) comes before a settlement.
    upstream = await startScriptedUpstream({ defaults: { latencyMs: 6000 } });
    app = await startApp(mode.config, { config: { ...relaxedLimits, plans }, env: { SVC_UPSTREAM_URL: upstream.url } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await mode.cleanup();
  });

  it(`admits exactly ${k} of 30 simultaneous requests under a monthly cap`, async () => {
    const { memberId, token } = await creditPayer(app, { budgetMonth: formatMicros(dayCap) });
    const client = new OpenAI({ apiKey: token, baseURL: `${app.url}/v1`, maxRetries: 0 });
    const results = await Promise.all(Array.from({ length: 30 }, () => outcome(client.chat.completions.create(params))));
    expect(results.filter((r) => r === 'ok')).toHaveLength(k);
    for (const error of results.filter((r): r is ApiError => r !== 'ok')) {
      expect(error.code).toBe('key_budget_exceeded');
      expect(error.message).toMatch(/API key's monthly spend cap/);
    }
    expect(upstream.stats.requests).toBe(k);
    await settled(app);
    const connection = app.app.services.db.orm.em.getConnection();
    const [row] = await connection.execute<{ billed: string; n: number }[]>(
      `select coalesce(sum(cost_micros), 0)::bigint as billed, count(*)::int as n from usage_ledger where account_id = ? and paid_from_credit`,
      [memberId],
    );
    expect(row!.n).toBe(k);
    expect(Number(row!.billed)).toBeLessThanOrEqual(dayCap);
    // Every hold ended with its turn: the key's counter is what the ledger billed.
    const [held] = await connection.execute<{ n: number }[]>(`select count(*)::int as n from key_cap_hold`);
    expect(held!.n).toBe(0);
    const [counter] = await connection.execute<{ used: string }[]>(`select sum(used_micros)::bigint as used from key_spend_counter where window_key = ?`, [app.app.services.windows.current().month.key]);
    expect(Number(counter!.used)).toBe(Number(row!.billed));
  }, 60_000);
});

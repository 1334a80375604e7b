/**
 * The money bug a client-chosen request id used to open (issue 9 item 0, issue 15 item 1): reservations,
 * stream slots and ledger rows were keyed by `x-svc-request-id`, so overlapping requests sharing one id ran
 * past the pool and lost ledger rows, and reusing another account's in-flight id moved that account's row.
 * Now the client's id is for tracing only: every turn is keyed by an id svc generates. Two instances, two
 * accounts, real PostgreSQL and Redis.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { startApp, type TestApp, settled } from '../../helpers/app.ts';
import { ledgerRows, relaxedLimits, startHarness, type Harness } from '../gateway/harness.ts';

const k = 4;
const maxTokens = 1000;
const params = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'Say something. #replay' }], max_tokens: maxTokens };
const requestBytes = Buffer.byteLength(JSON.stringify(params));
// Fast class at 70 % off: 42,000 / 84,000 micros per 1M tokens; the reservation is the worst case.
const reservation = Math.ceil((requestBytes * 42_000 + maxTokens * 84_000) / 1_000_000);
const dayLimit = k * reservation + Math.floor(reservation / 2);
const plans = {
  ...defaultPlans,
  free: {
    name: 'Free',
    requestsPerMinute: 100_000,
    pools: { fast: { day: formatMicros(dayLimit), week: 100, month: 100 }, premium: { day: 1, week: 5, month: 20 } },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
};

let h: Harness;
let second: TestApp;

beforeAll(async () => {
  // Slow replies: every request below is in flight at once.
  h = await startHarness({ config: { plans, rateLimits: { ...relaxedLimits.rateLimits, concurrentStreamsPerAccount: 3 } }, upstream: { defaults: { latencyMs: 1500 } } });
  second = await startApp(h.mode.config, { config: { plans, rateLimits: { ...relaxedLimits.rateLimits, concurrentStreamsPerAccount: 3 } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
});
afterAll(async () => {
  await second?.close();
  await h?.close();
});

const sharedId = `mbr_replayed_${process.pid}_${Date.now()}`;

function client(url: string, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0, defaultHeaders: { 'x-svc-request-id': sharedId } });
}

describe('a client-chosen request id keys nothing', () => {
  it('overlapping requests that share one id are each admitted against the pool and each get a ledger row', async () => {
    const member = await h.member();
    const clients = [client(h.app.url, member.key), client(second.url, member.key)];
    const results = await Promise.all(
      Array.from({ length: 3 * k }, (_, i) =>
        clients[i % 2]!.chat.completions.create(params).then(
          () => 'ok' as const,
          (error: InstanceType<typeof OpenAI.APIError>) => error.status,
        ),
      ),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(k);
    expect(results.filter((r) => r === 402)).toHaveLength(2 * k);
    const rows = await ledgerRows(h.database, member.accountId, k);
    expect(rows).toHaveLength(k);
    expect(new Set(rows.map((row) => row.request_id)).size).toBe(k);
    for (const row of rows) {
      expect(row.client_request_id).toBe(sharedId);
      expect(row.request_id).not.toBe(sharedId);
    }
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    expect(billed).toBeLessThanOrEqual(dayLimit);
  });

  it('overlapping streams that share one id each hold their own slot under the cap', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const clients = [client(h.app.url, member.key), client(second.url, member.key)];
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        clients[i % 2]!.chat.completions.create({ ...params, stream: true }).then(
          async (stream) => {
            for await (const _chunk of stream) void _chunk;
            return 'ok' as const;
          },
          (error: InstanceType<typeof OpenAI.APIError>) => error.status,
        ),
      ),
    );
    // The cap is 3 concurrent streams per payer, whatever ids the client sends.
    expect(results.filter((r) => r === 'ok')).toHaveLength(3);
    expect(results.filter((r) => r === 429)).toHaveLength(5);
    expect(await ledgerRows(h.database, member.accountId, 3)).toHaveLength(3);
  });

  it("reusing another account's in-flight id neither takes its ledger row nor touches its pool", async () => {
    const victim = await h.member({ planPackage: 'pro' });
    const attacker = await h.member({ planPackage: 'pro' });
    // The victim's request: its id is svc's own, visible to anyone it is shared with (logs, support tickets).
    const victimCall = new OpenAI({ apiKey: victim.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 }).chat.completions.create(params).withResponse();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const victimRows = await h.database.query('select 1 from usage_ledger where account_id = $1', [victim.accountId]);
    expect(victimRows.rowCount).toBe(0); // still in flight
    // Find the victim's in-flight turn id: the reservation svc made for it.
    const redis = h.app.app.services.redis.redis!;
    const prefix = (h.mode.config as { redis: { keyPrefix: string } }).redis.keyPrefix;
    const reservations = await redis.zrange('res:index', 0, -1);
    expect(reservations.length).toBeGreaterThan(0);
    const attacks = reservations.map((id) =>
      new OpenAI({ apiKey: attacker.key, baseURL: `${second.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-svc-request-id': id } }).chat.completions.create(params),
    );
    const [{ response }] = await Promise.all([victimCall, ...attacks]);
    const victimId = response.headers.get('x-request-id')!;
    expect(reservations).toContain(victimId);

    const [victimRow] = await ledgerRows(h.database, victim.accountId, 1);
    expect(victimRow!.request_id).toBe(victimId);
    expect(victimRow!.payer_id).toBe(victim.accountId);
    const attackerRows = await ledgerRows(h.database, attacker.accountId, attacks.length);
    expect(attackerRows).toHaveLength(attacks.length);
    for (const row of attackerRows) {
      expect(row.request_id).not.toBe(victimId);
      expect(row.payer_id).toBe(attacker.accountId);
    }
    // Each pool holds exactly its own ledger's cost.
    await settled(h.app, second);
    for (const member of [victim, attacker]) {
      const usage = await fetch(`${h.app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${member.key}` } });
      const report = (await usage.json()) as { pools: { class: string; window: string; used: { amountMicros: number } }[] };
      const used = report.pools.find((pool) => pool.class === 'fast' && pool.window === 'day')!.used.amountMicros;
      const rows = await ledgerRows(h.database, member.accountId, 1);
      expect(used).toBe(rows.reduce((sum, row) => sum + Number(row.cost_micros), 0));
    }
    expect(await redis.keys(`${prefix}res:mbr_*`)).toEqual([]);
  });
});

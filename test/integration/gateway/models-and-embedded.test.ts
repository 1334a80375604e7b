/**
 * `/v1/models` per plan through the SDK; settlement idempotence (settling twice writes one ledger row,
 * and the ledger refuses edits); and the whole chat path in embedded mode (PGlite + in-process limits),
 * where the reservation is one conditional SQL statement.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { embeddedMode, startApp, type TestApp, settled } from '../../helpers/app.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { Settlement } from '../../../server/metering/settlement.ts';
import { Sweeper } from '../../../server/metering/sweeper.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { ledgerRows, startHarness, type Harness } from './harness.ts';

const plans = { ...defaultPlans, free: { ...defaultPlans.free, models: ['auto', 'svc-2.1-fast'] } };
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ config: { plans } });
});
afterAll(() => h?.close());

describe('models per plan', () => {
  it('lists only the ids the plan may use, and chat refuses the others with 404', async () => {
    const free = await h.member();
    const pro = await h.member({ planPackage: 'pro' });
    const freeIds = [];
    for await (const model of free.client.models.list()) freeIds.push(model.id);
    expect(freeIds).toEqual(['auto', 'svc-2.1-fast']);
    const proPage = await pro.client.models.list();
    expect(proPage.data).toHaveLength(11);
    expect(proPage.data[0]).toMatchObject({ object: 'model', owned_by: 'svc' });
    expect(await pro.client.models.retrieve('svc-2.1')).toMatchObject({ id: 'svc-2.1', object: 'model' });
    await expect(free.client.models.retrieve('svc-2.1')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const error = await free.client.chat.completions.create({ model: 'svc-2.1', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as Error).message).toContain('Valid ids: auto, svc-2.1-fast');
  });
});

describe('ledger', () => {
  it('settling the same request twice writes one row; rows cannot be edited', async () => {
    const member = await h.member();
    const { services } = h.app.app;
    const settlement = new Settlement(services.config, services.db, services.pools, h.app.app.log);
    const entry = ledgerEntry(member.accountId, { requestId: `mbr_twice${Date.now()}`, model: 'auto', inputTokens: 10, outputTokens: 20, costMicros: 3, reservedMicros: 50, latencyMs: 5 });
    settlement.record(entry, null);
    settlement.record({ ...entry, costMicros: 999 }, null);
    await settlement.flush();
    await settlement.close();
    const rows = await ledgerRows(h.database, member.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.cost_micros).toBe('3');
    await expect(h.database.query('update usage_ledger set cost_micros = 0 where account_id = $1', [member.accountId])).rejects.toThrow(/append-only/);
    await expect(h.database.query('delete from usage_ledger where account_id = $1', [member.accountId])).rejects.toThrow(/append-only/);
  });
});

describe('embedded mode', () => {
  let app: TestApp;
  let upstream: ScriptedUpstream;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    const mode = embeddedMode();
    cleanup = mode.cleanup;
    const tiny = { ...defaultPlans, free: { ...defaultPlans.free, pools: { fast: { day: 0.0003, week: 1, month: 4 }, premium: defaultPlans.free.pools.premium } } };
    app = await startApp(mode.config, { config: { plans: tiny }, env: { SVC_UPSTREAM_URL: upstream.url } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await cleanup?.();
  });

  it('chats, streams, bills, and refuses what the pool cannot cover', async () => {
    const account = await app.app.services.accounts.signUp({ email: `embedded-${Date.now()}@example.com`, password: 'correct horse battery staple' });
    const { token } = await app.app.services.apiKeys.createForAccount(account.id, { name: 'embedded' });
    const client = new OpenAI({ apiKey: token, baseURL: `${app.url}/v1`, maxRetries: 0 });
    // 300 micros a day: one worst case (~214 micros: 2,500 output tokens at 84 micros/1k) fits, two do not.
    const params = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'hi' }], max_tokens: 2500 };
    const completion = await client.chat.completions.create(params);
    expect(completion.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
    const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
    let usage = null;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage).toMatchObject({ completion_tokens: 8 });
    await settled(app); // settlement releases the stream's reservation
    // Two slow requests at once: the second worst case no longer fits beside the first.
    const slow = { ...params, messages: [{ role: 'user' as const, content: '#script {"latencyMs":400}' }] };
    const results = await Promise.allSettled([client.chat.completions.create(slow), client.chat.completions.create(slow)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((rejected.reason as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    await settled(app);
    const connection = app.app.services.db.orm.em.getConnection();
    const rows = await connection.execute<{ status: string; cost_micros: string }[]>(`select status, cost_micros from usage_ledger where account_id = ? order by id`, [account.id], 'all');
    expect(rows.map((row) => row.status)).toEqual(['ok', 'ok', 'ok']);
    const [counter] = await connection.execute<{ used_micros: string }[]>(
      `select used_micros from usage_counter where payer_id = ? and class = 'fast' and window_key like 'd%'`,
      [account.id],
      'all',
    );
    expect(Number(counter!.used_micros)).toBe(rows.reduce((sum, row) => sum + Number(row.cost_micros), 0));
    const [{ count }] = (await connection.execute(`select count(*)::int as count from usage_reservation`, [], 'all')) as [{ count: number }];
    expect(count).toBe(0);
  });
});

describe('reconciliation', () => {
  it('raises pool counters Redis lost back to what the ledger billed, and never lowers them', async () => {
    const member = await h.member({ planPackage: 'pro' });
    await member.client.chat.completions.create({ model: 'svc-2.1', messages: [{ role: 'user', content: 'one' }] });
    await member.client.chat.completions.create({ model: 'svc-2.1', messages: [{ role: 'user', content: 'two' }] });
    const rows = await ledgerRows(h.database, member.accountId, 2);
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    await settled(h.app);
    const { services } = h.app.app;
    const redis = services.redis.redis!;
    const windows = services.windows.current();
    const keys = (['day', 'week', 'month'] as const).map((w) => `pool:${member.accountId}:premium:${windows[w].key}`);
    expect((await redis.mget(keys)).map(Number)).toEqual([billed, billed, billed]);
    await redis.del(...keys); // Redis lost them
    await redis.set(keys[2]!, billed + 1000); // and this one holds more (e.g. a running reservation)
    const sweeper = new Sweeper(services.config, services.db, services.pools, services.windows, h.app.app.log);
    expect(await sweeper.reconcile()).toBeGreaterThanOrEqual(2);
    expect((await redis.mget(keys)).map(Number)).toEqual([billed, billed, billed + 1000]);
    expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
  });

  it('counts a request in the window it was admitted in, not the one its ledger row was written in', async () => {
    const member = await h.member();
    const { services } = h.app.app;
    const windows = services.windows.current();
    // Admitted two seconds before today began, settled (row written) one second after: yesterday's cost,
    // already in yesterday's counter. Reconciling must not charge it to today as well.
    const midnight = windows.day.startsAt.getTime();
    await h.database.query(
      `insert into usage_ledger (request_id, account_id, payer_id, credential_kind, credential_id, channel, model, routed_model, deployment, class, stream,
         input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, upstream_status, latency_ms, created_at)
       values ($1, $2, $2, 'api_key', 'k', 'api', 'svc-2.1-fast', 'svc-2.1-fast', 'default', 'fast', false, 1, 2, false, 700, 900, 'USD', 'ok', 200, 3000, $3)`,
      [`mbr_midnight${Date.now()}`, member.accountId, new Date(midnight + 1000)],
    );
    await new Sweeper(services.config, services.db, services.pools, services.windows, h.app.app.log).reconcile();
    expect(Number(await services.redis.redis!.get(`pool:${member.accountId}:fast:${windows.day.key}`))).toBe(0);
  });
});

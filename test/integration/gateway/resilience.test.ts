/**
 * Failure modes: Redis cut off → admission fails closed (503, the upstream never called), a busy payer's
 * admission lease included; an instance
 * killed with -9 while holding reservations → after restart the sweeper leaves none behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, settled, startApp } from '../../helpers/app.ts';
import { testRedisUrl } from '../../helpers/env.ts';
import { CuttableProxy } from '../../helpers/tcp-proxy.ts';
import { createMember, ledgerRows, relaxedLimits, startHarness, type Harness } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  // This instance only creates members; its sweeper stays out of the way of the crash test.
  h = await startHarness({ config: { gateway: { sweepIntervalSeconds: 3600 } } });
});
afterAll(() => h?.close());

const hello = [{ role: 'user' as const, content: 'Say hello.' }];

describe('Redis unreachable', () => {
  const proxy = new CuttableProxy(new URL(testRedisUrl));
  afterAll(() => proxy.close());

  it('answers 503 service_unavailable and never calls the upstream', async () => {
    await proxy.listen();
    const app = await startApp(h.mode.config, {
      // Its own key prefix: what it leaves behind when cut off is not counted by the tests below.
      config: { ...relaxedLimits, redis: { url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: `${(h.mode.config.redis as { keyPrefix: string }).keyPrefix}down:` } },
      env: { SVC_UPSTREAM_URL: h.upstream.url },
    });
    try {
      const member = await createMember(app);
      await member.client.chat.completions.create({ model: 'auto', messages: hello });
      const before = h.upstream.stats.requests;
      proxy.cut();
      await new Promise((r) => setTimeout(r, 200));
      for (const stream of [false, true]) {
        const error = await member.client.chat.completions.create({ model: 'auto', messages: hello, stream }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.InternalServerError);
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
        expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('service_unavailable');
      }
      expect(h.upstream.stats.requests).toBe(before);
    } finally {
      await app.close();
    }
  });

  it('a busy payer admitted under a lease gets 503 too: the lease does not outlive the connection', async () => {
    proxy.restore();
    const app = await startApp(h.mode.config, {
      config: { ...relaxedLimits, redis: { url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: `${(h.mode.config.redis as { keyPrefix: string }).keyPrefix}down2:` } },
      env: { SVC_UPSTREAM_URL: h.upstream.url },
    });
    try {
      const member = await createMember(app);
      for (let i = 0; i < 12; i++) await member.client.chat.completions.create({ model: 'auto', messages: hello });
      await settled(app);
      const { rows } = await h.database.query('select count(lease_id)::int as n from usage_ledger where account_id = $1', [member.accountId]);
      expect(rows[0].n).toBeGreaterThan(0);
      const before = h.upstream.stats.requests;
      proxy.cut();
      await new Promise((r) => setTimeout(r, 200));
      const error = await member.client.chat.completions.create({ model: 'auto', messages: hello }).catch((e: unknown) => e);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('service_unavailable');
      expect(h.upstream.stats.requests).toBe(before);
    } finally {
      await app.close();
    }
  });
});

describe('crash recovery', () => {
  let child: ChildProcess | null = null;
  const dir = mkdtempSync(join(tmpdir(), 'svc-crash-'));
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  async function spawnServer(configFile: string, port: number): Promise<ChildProcess> {
    const proc = spawn(process.execPath, [resolve('server/main.ts')], {
      env: { ...process.env, SVC_CONFIG: configFile, SVC_UPSTREAM_URL: h.upstream.url, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (ok) return proc;
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('kill -9 under streams → after restart the sweeper bills each at its last checkpoint and frees every slot', async () => {
    const redisConfig = (h.mode.config as { redis: { url: string; keyPrefix: string } }).redis;
    const configFile = join(dir, 'svc.yaml');
    writeFileSync(
      configFile,
      JSON.stringify({
        server: { host: '127.0.0.1', logLevel: 'warn' },
        database: { url: h.database.url },
        redis: redisConfig,
        gateway: { reservationTtlSeconds: 5, sweepIntervalSeconds: 0.25, checkpointSeconds: 0.3 },
        rateLimits: relaxedLimits.rateLimits,
      }),
    );
    const port = await freePort();
    child = await spawnServer(configFile, port);
    const member = await createMember(h.app);
    const redis = h.app.app.services.redis.redis!;

    // Four long streams, each admitted (reserved) and producing; each reader counts the chunks it got.
    const received = [0, 0, 0, 0];
    const streams = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'svc-2.1', stream: true, messages: [{ role: 'user', content: '#script {"intervalMs":100,"chunks":1000}' }] }),
        });
        const reader = response.body!.getReader();
        await reader.read();
        return reader;
      }),
    );
    const pumps = streams.map(async (reader, i) => {
      // Counted over the whole text: an event split across two reads is still one token received.
      const decoder = new TextDecoder();
      let text = '';
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) break;
        text += decoder.decode(value, { stream: true });
        received[i] = (text.match(/"content":"tok "/g) ?? []).length;
      }
    });
    // Until every stream has checkpointed (every 0.3 s; a chunk every 0.1 s), and a little longer.
    const checkpoints = () => redis.keys(`${redisConfig.keyPrefix}ckpt:*`);
    while ((await checkpoints()).length < 4) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 400));
    // (Earlier tests' last settlements may still be landing: wait for exactly these four.)
    await expect.poll(() => redis.zcard('res:index')).toBe(4);
    const usage = async () => {
      const response = await fetch(`${h.app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${member.key}` } });
      const body = (await response.json()) as { pools: { class: string; window: string; used: { amountMicros: number } }[] };
      return body.pools.find((p) => p.class === 'premium' && p.window === 'day')!.used.amountMicros;
    };
    expect(await usage()).toBeGreaterThan(0);

    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    await Promise.all(pumps);
    // What the dead instance last recorded for each stream.
    const recorded = (await redis.mget((await checkpoints()).map((key) => key.slice(redisConfig.keyPrefix.length))))
      .map((json) => (JSON.parse(json!) as { outputTokens: number }).outputTokens)
      .sort((a, b) => a - b);
    expect(await redis.zcard('res:index')).toBe(4);

    child = await spawnServer(configFile, port);
    const deadline = Date.now() + 10_000;
    while ((await redis.zcard('res:index')) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await redis.zcard('res:index')).toBe(0);
    expect(await redis.keys(`${redisConfig.keyPrefix}res:*`)).toEqual([]);
    expect(await redis.keys(`${redisConfig.keyPrefix}ckpt:*`)).toEqual([]);
    expect(await redis.zcard(`streams:${member.accountId}`)).toBe(0);
    const rows = await ledgerRows(h.database, member.accountId, 4);
    expect(rows.map((row) => row.status)).toEqual(['abandoned', 'abandoned', 'abandoned', 'abandoned']);
    // Billed at the last checkpoint: what had been produced a moment before the crash — not 0, not the ceiling.
    const produced = [...received].sort((a, b) => a - b);
    const billed = rows.map((row) => row.output_tokens).sort((a, b) => a - b);
    expect(billed).toEqual(recorded);
    // Within one checkpoint interval of what the client got (0.3 s = 3 chunks): the last chunks a killed
    // process wrote can be lost on the way (a reset connection drops what the client had not read yet).
    const chunksPerCheckpoint = 3;
    for (let i = 0; i < 4; i++) {
      expect(billed[i]).toBeGreaterThan(0);
      expect(billed[i]).toBeLessThanOrEqual(produced[i]! + chunksPerCheckpoint);
    }
    for (const row of rows) {
      expect(row.estimated).toBe(true);
      expect(Number(row.cost_micros)).toBeGreaterThan(0);
      expect(Number(row.cost_micros)).toBeLessThan(Number(row.reserved_micros));
    }
    expect(await usage()).toBe(rows.reduce((sum, row) => sum + Number(row.cost_micros), 0));
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
    child = null;
  });

  it('kill -9 → another instance reclaims the dead one’s reservations and stream slots within 30 s, long before their TTL', async () => {
    const redisConfig = (h.mode.config as { redis: { url: string; keyPrefix: string } }).redis;
    const configFile = join(dir, 'svc-dead.yaml');
    writeFileSync(
      configFile,
      JSON.stringify({
        server: { host: '127.0.0.1', logLevel: 'warn' },
        database: { url: h.database.url },
        redis: redisConfig,
        gateway: { reservationTtlSeconds: 3600, checkpointSeconds: 0.3 },
        rateLimits: { ...relaxedLimits.rateLimits, concurrentStreamsPerAccount: 2 },
      }),
    );
    const port = await freePort();
    child = await spawnServer(configFile, port);
    const member = await createMember(h.app);
    const redis = h.app.app.services.redis.redis!;
    const open = () =>
      fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-2.1', stream: true, messages: [{ role: 'user', content: '#script {"intervalMs":100,"chunks":1000}' }] }),
      });
    const readers = await Promise.all([open(), open()].map(async (response) => {
      const reader = (await response).body!.getReader();
      await reader.read();
      return reader;
    }));
    // The cap (2) is full: a third stream is refused.
    expect((await open()).status).toBe(429);
    expect(await redis.zcard(`streams:${member.accountId}`)).toBe(2);

    const killedAt = Date.now();
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    child = null;
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    // This instance's sweeper (driven here instead of its 15 s timer) takes them once the dead one is silent.
    const { sweeper } = h.app.app.services;
    while ((await redis.zcard(`streams:${member.accountId}`)) > 0 && Date.now() - killedAt < 30_000) {
      await sweeper.sweep();
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    expect(await redis.zcard(`streams:${member.accountId}`)).toBe(0);
    const rows = await ledgerRows(h.database, member.accountId, 2);
    expect(rows.map((row) => row.status)).toEqual(['abandoned', 'abandoned']);
    // The slots are free: a new stream is admitted on a live instance.
    const again = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1', stream: true, messages: [{ role: 'user', content: 'hello again' }] }),
    });
    expect(again.status).toBe(200);
    await again.text();
  }, 60_000);
});

/**
 * Rate limits on the chat path (429 with Retry-After and x-ratelimit-*), the concurrent-stream cap, and
 * a client that disconnects mid-stream (upstream aborted, exactly one ledger row billing what was produced).
 */
import { connect } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { ledgerRows, startHarness, type Harness } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    config: {
      plans: { ...defaultPlans, free: { ...defaultPlans.free, requestsPerMinute: 3 } },
      rateLimits: { ipPerMinute: 100_000, concurrentStreamsPerAccount: 2 },
    },
  });
});
afterAll(() => h?.close());

const hello = [{ role: 'user' as const, content: 'Say hello.' }];

describe('rate limits', () => {
  it('429 rate_limited with Retry-After and x-ratelimit-* once the account limit is spent', async () => {
    const member = await h.member();
    const first = await member.client.chat.completions.create({ model: 'auto', messages: hello }).withResponse();
    expect(first.response.headers.get('x-ratelimit-limit')).toBe('3');
    expect(first.response.headers.get('x-ratelimit-remaining')).toBe('2');
    await member.client.chat.completions.create({ model: 'auto', messages: hello });
    await member.client.chat.completions.create({ model: 'auto', messages: hello });
    const before = h.upstream.stats.requests;
    const error = await member.client.chat.completions.create({ model: 'auto', messages: hello }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limited');
    const raw = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: hello }),
    });
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(raw.headers.get('retry-after'))).toBeLessThanOrEqual(20);
    expect(raw.headers.get('x-ratelimit-limit')).toBe('3');
    expect(raw.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(raw.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
    expect(((await raw.json()) as { stage: string }).stage).toBe('rate_limit');
    expect(h.upstream.stats.requests).toBe(before);
    // Another account is not affected.
    const other = await h.member();
    await expect(other.client.chat.completions.create({ model: 'auto', messages: hello })).resolves.toBeTruthy();
  });

  it('caps concurrent streams per account', async () => {
    const member = await h.member();
    const slow = { model: 'auto', stream: true as const, messages: [{ role: 'user' as const, content: '#script {"intervalMs":100,"chunks":6}' }] };
    const open = await Promise.all([member.client.chat.completions.create(slow), member.client.chat.completions.create(slow)]);
    const third = await member.client.chat.completions.create(slow).catch((e: unknown) => e);
    expect(third).toBeInstanceOf(OpenAI.RateLimitError);
    expect((third as Error).message).toContain('concurrent streams');
    for (const stream of open) for await (const _ of stream) void _;
    // Slots are freed at settlement.
    const redis = h.app.app.services.redis.redis!;
    const deadline = Date.now() + 2000;
    while ((await redis.zcard(`streams:${member.accountId}`)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await redis.zcard(`streams:${member.accountId}`)).toBe(0);
  });
});

describe('client disconnect', () => {
  it('aborts the upstream and writes exactly one ledger row billing the produced tokens', async () => {
    const member = await h.member();
    const abortedBefore = h.upstream.stats.aborted;
    const stream = await member.client.chat.completions.create({
      model: 'svc-2.1',
      stream: true,
      messages: [{ role: 'user', content: '#script {"intervalMs":40,"chunks":200}' }],
    });
    let received = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) received++;
      if (received === 5) break; // leaving the loop aborts the request
    }
    const deadline = Date.now() + 3000;
    while (h.upstream.stats.aborted === abortedBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.upstream.stats.aborted).toBe(abortedBefore + 1);
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ status: 'client_disconnected', estimated: true, stream: true });
    // Billed what the upstream produced before the abort: at least what we read, far less than 200.
    expect(row!.output_tokens).toBeGreaterThanOrEqual(5);
    expect(row!.output_tokens).toBeLessThan(60);
    expect(Number(row!.cost_micros)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await ledgerRows(h.database, member.accountId, 2, 0)).toHaveLength(1);
  });

  it('a non-streaming request whose client leaves is aborted upstream at once and settled, not billed as answered', async () => {
    const member = await h.member();
    const controller = new AbortController();
    const pending = fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1', messages: [{ role: 'user', content: '#script {"latencyMs":3000}' }] }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    const requestsBefore = h.upstream.stats.requests;
    const deadline = Date.now() + 2000;
    while (h.upstream.stats.requests === requestsBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const abortedAt = Date.now();
    controller.abort();
    await pending;
    // The row is written when the upstream call ends: at once if it was aborted, after 3 s if it was not.
    const [row] = await ledgerRows(h.database, member.accountId, 1, 1500);
    expect(Date.now() - abortedAt).toBeLessThan(1500);
    expect(row).toMatchObject({ status: 'client_disconnected', stream: false });
    expect(row!.output_tokens).toBe(0);
    // The upstream finds the connection gone when its reply is due: nothing delivered, nothing counted (the
    // benchmark's ledger check relies on this to tell answered requests from abandoned ones).
    const { aborted, promptTokens } = h.upstream.stats;
    await new Promise((resolve) => setTimeout(resolve, 3100));
    expect(h.upstream.stats.aborted).toBe(aborted + 1);
    expect(h.upstream.stats.promptTokens).toBe(promptTokens);
  });

  it('a client that hangs up before admission finishes is settled at once, not left holding its reservation', async () => {
    const member = await h.member();
    const requestsBefore = h.upstream.stats.requests;
    const { hostname, port } = new URL(h.app.url);
    const body = JSON.stringify({ model: 'auto', stream: true, messages: [{ role: 'user', content: '#script {"intervalMs":20,"chunks":100}' }] });
    for (let i = 0; i < 2; i++) {
      const socket = connect(Number(port), hostname);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${member.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      socket.destroy();
    }
    const rows = await ledgerRows(h.database, member.accountId, 2, 3000);
    expect(rows).toHaveLength(2);
    // Billed only if the request reached the upstream; refunded in full if the client left before dispatch.
    const dispatched = h.upstream.stats.requests - requestsBefore;
    const billed = rows.filter((row) => row.status === 'client_disconnected');
    const refunded = rows.filter((row) => row.status === 'refunded');
    expect(billed.length + refunded.length).toBe(2);
    expect(billed.length).toBe(dispatched);
    for (const row of refunded) expect(Number(row.cost_micros)).toBe(0);
    const redis = h.app.app.services.redis.redis!;
    const deadline = Date.now() + 1000;
    while ((await redis.zcard(`streams:${member.accountId}`)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await redis.zcard(`streams:${member.accountId}`)).toBe(0);
  });
});

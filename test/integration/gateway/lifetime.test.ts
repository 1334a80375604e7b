/**
 * A turn never outlives its reservation: the sweeper treats a reservation past its TTL as abandoned by a
 * dead instance, so a live request must end (and settle) first — whether the upstream streams forever or
 * the client stops reading.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ config: { gateway: { reservationTtlSeconds: 3, sweepIntervalSeconds: 0.25 } } });
});
afterAll(() => h?.close());

/**
 * The pool's day counter for premium models equals what the ledger billed, and no reservation is left.
 * `dayKeyAtStart` is the day the turn was admitted in: a run that crosses midnight must not look at the
 * new day's (empty) counter.
 */
async function expectSettledAsBilled(member: Member, dayKeyAtStart: string): Promise<void> {
  const redis = h.app.app.services.redis.redis!;
  const rows = await ledgerRows(h.database, member.accountId);
  const dayKeys = new Set([dayKeyAtStart, h.app.app.services.windows.current().day.key]);
  let used = 0;
  for (const key of dayKeys) used += Number(await redis.get(`pool:${member.accountId}:premium:${key}`));
  expect(used).toBe(Number(rows[0]!.cost_micros));
  expect(await redis.zcard(`streams:${member.accountId}`)).toBe(0);
}

describe('turn lifetime', () => {
  it('an upstream that streams past the reservation TTL is cut off with an error event and billed, not swept', async () => {
    const member = await h.member();
    const dayKey = h.app.app.services.windows.current().day.key;
    const response = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1', stream: true, messages: [{ role: 'user', content: '#script {"intervalMs":50,"chunks":200}' }] }),
      signal: AbortSignal.timeout(6000),
    });
    const text = await response.text().catch(() => '');
    expect(text.trim().split('\n\n').at(-1)).toMatch(/^data: \{"error":\{.*"code":"upstream_timeout"/);
    await new Promise((resolve) => setTimeout(resolve, 3500)); // past the TTL: the sweeper has run
    const rows = await ledgerRows(h.database, member.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'upstream_failed' });
    expect(Number(rows[0]!.cost_micros)).toBeGreaterThan(0);
    await expectSettledAsBilled(member, dayKey);
  });

  it('a client that stops reading is let go before the reservation TTL, and billed what was produced', async () => {
    const member = await h.member();
    const dayKey = h.app.app.services.windows.current().day.key;
    const { hostname, port } = new URL(h.app.url);
    // 20 MB at once: far more than the socket buffers hold, so the gateway waits for a drain that never comes.
    const body = JSON.stringify({ model: 'svc-2.1', stream: true, messages: [{ role: 'user', content: `#script {"chunks":5000,"chunkText":"${'x'.repeat(4000)}"}` }] });
    const socket = connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${member.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    socket.pause(); // never reads: the server's writes back up
    const started = Date.now();
    const rows = await ledgerRows(h.database, member.accountId, 1, 6000);
    expect(Date.now() - started).toBeLessThan(3000); // settled before its reservation's TTL
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'client_disconnected' });
    expect(Number(rows[0]!.cost_micros)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 3500)); // past the TTL: the sweeper has run
    expect(await ledgerRows(h.database, member.accountId, 2, 0)).toHaveLength(1);
    await expectSettledAsBilled(member, dayKey);
    socket.destroy();
  });
});

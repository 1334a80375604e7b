/**
 * One of two svc processes killed (SIGKILL) under short non-streamed requests spread over both:
 * no ledger row lost and none made up. Every request answered 200 has exactly one ledger row (status
 * `ok`); the requests the dead process was serving are given back by a survivor's sweeper (no row, or a
 * row at zero cost: nothing was delivered); and once the survivors have stopped (returning their admission
 * leases) the member's pool counters in Redis equal what the ledger billed, and the rollups equal the
 * ledger (`svc ledger check`). `npm run bench:cluster` runs the same check through HAProxy at a few hundred
 * requests a second, on one Redis and on a Redis Cluster.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolKey } from '../../../server/metering/pool.redis-store.ts';
import { PoolWindows } from '../../../server/metering/windows.ts';
import { Bed, ROOT, sleep, until, type Instance, type Member } from '../../drills/bed.ts';

const run = promisify(execFile);

/** Workers each sending one request after another, over the processes in turn. */
const WORKERS = 12;
/** The upstream answers after this long, so each process has a few requests in flight when the kill comes. */
const LATENCY_MS = 40;
const BEFORE_KILL_MS = 2_500;
const AFTER_KILL_MS = 1_500;

interface Outcome {
  status: number;
  requestId: string | null;
  /** When the reply had arrived whole (performance.now()). */
  at: number;
}

/**
 * An answered turn's row is checkpointed in Redis in the event-loop turn after its reply is written
 * (settlement.ts): a kill inside that sub-millisecond window can still lose it. Replies the client had
 * this long before the kill are past it on any machine, however loaded; each of them must be billed.
 */
const CHECKPOINT_WINDOW_MS = 50;

async function chatOnce(instance: Instance, key: string): Promise<Outcome> {
  try {
    const response = await fetch(`${instance.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1-fast', max_tokens: 64, messages: [{ role: 'user', content: `#script {"latencyMs":${LATENCY_MS}}\nhello` }] }),
    });
    await response.arrayBuffer();
    return { status: response.status, requestId: response.headers.get('x-request-id'), at: performance.now() };
  } catch {
    // The kill cuts the connection before a status arrives.
    return { status: 0, requestId: null, at: performance.now() };
  }
}

let bed: Bed;
let instances: Instance[];
let member: Member;

beforeAll(async () => {
  // A sweep every second, so a survivor settles the dead process's reservations within the test's time.
  bed = new Bed({ config: { plans: Bed.roomyPlans(), gateway: { sweepIntervalSeconds: 1 } } });
  await bed.start();
  const first = await bed.startInstance('svc-1');
  // The second boots while the member signs up (the first ran the migrations).
  [instances, member] = await Promise.all([bed.startInstance('svc-2').then((second) => [first, second]), bed.member(first, 1)]);
}, 120_000);
afterAll(() => bed?.close());

describe('one instance of two killed mid-load', () => {
  it('keeps exactly one ledger row per 200, refunds what the dead one held, and leaves pools equal to the ledger', async () => {
    const [victim, ...survivors] = instances;
    const outcomes: Outcome[] = [];
    let killed = false;
    let stop = false;
    const workers = Array.from({ length: WORKERS }, async (_, w) => {
      for (let i = w; !stop; i++) {
        const target = instances[i % instances.length]!;
        // After the kill the load goes on over the survivors, as a load balancer's health check would have it.
        outcomes.push(await chatOnce(killed && target === victim ? survivors[i % survivors.length]! : target, member.keys[0]!));
      }
    });
    await sleep(BEFORE_KILL_MS);
    const killedAt = performance.now();
    victim!.child.kill('SIGKILL');
    killed = true;
    await new Promise((done) => victim!.child.proc.once('exit', done));
    await sleep(AFTER_KILL_MS);
    stop = true;
    await Promise.all(workers);

    const answered = outcomes.filter((o) => o.status === 200).map((o) => o.requestId!);
    const cut = outcomes.filter((o) => o.status === 0).length;
    expect(outcomes.every((o) => o.status === 200 || o.status === 0), `statuses ${[...new Set(outcomes.map((o) => o.status))].join(', ')}`).toBe(true);
    expect(answered.length).toBeGreaterThan(50);
    expect(new Set(answered).size).toBe(answered.length);

    // The survivors' sweepers: the victim is dead once silent for 10 s, then each reservation it held is
    // settled (to its ledger row if written, else released at zero) within a sweep.
    // Once all it held is settled, a sweeper forgets it: only the survivors' heartbeats are left.
    await until('a sweeper to settle the dead instance', async () => ((await bed.redis.zcard('instances')) === survivors.length ? true : undefined), 40_000, 250);
    const { rows } = await bed.db.query<{ request_id: string; status: string; cost_micros: string }>('select request_id, status, cost_micros from usage_ledger where account_id = $1', [member.accountId]);
    const rowOf = new Map(rows.map((row) => [row.request_id, row]));
    const unbilled = outcomes.filter((o) => o.status === 200 && rowOf.get(o.requestId!)?.status !== 'ok');
    const lost = unbilled.filter((o) => o.at < killedAt - CHECKPOINT_WINDOW_MS).map((o) => o.requestId);
    expect(lost, `200s without an ok ledger row (of ${answered.length}; ${cut} cut by the kill; ${unbilled.length - lost.length} answered within ${CHECKPOINT_WINDOW_MS} ms of it)`).toEqual([]);
    expect(rows.length, 'one row per request id').toBe(rowOf.size);
    // Rows beyond the 200s: requests the victim had finished with the upstream when it died (billed what
    // was produced). None may be a request nobody sent: every row is one of the cut requests at most.
    expect(rows.length - answered.length).toBeGreaterThanOrEqual(0);
    expect(rows.length - answered.length).toBeLessThanOrEqual(cut);

    // Survivors stopped gracefully return their leases' unused budget: the pools hold exactly the ledger.
    await Promise.all(survivors.map((instance) => instance.child.stop(10_000)));
    const windows = new PoolWindows('UTC').current();
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    for (const window of [windows.day, windows.week, windows.month]) {
      expect(Number(await bed.redis.get(poolKey(member.accountId, 'fast', window.key))), `fast ${window.window} pool`).toBe(billed);
    }
    const check = await run(process.execPath, [resolve(ROOT, 'bin/svc.js'), 'ledger', 'check'], { env: { ...process.env, DATABASE_URL: bed.database.url } });
    expect(check.stdout).toMatch(/^0 differences/m);
    console.log(`kill mid-load: ${answered.length} answered 200, ${cut} cut by the kill, ${rows.length} ledger rows (${rows.length - answered.length} for cut requests), pools = ledger = ${billed} µ`);
  }, 120_000);
});

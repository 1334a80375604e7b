/**
 * One of two svc processes killed (SIGKILL) under short non-streamed requests spread over both, the kill
 * sent the moment one of the victim's replies has arrived whole: no ledger row lost and none made up.
 * Every request answered 200 has exactly one ledger row (status `ok`), however close to the kill it was
 * answered — a turn's final checkpoint is in Redis's socket before its reply's last bytes are written; the
 * requests the dead process was serving are given back by a survivor's sweeper (no row, or a row at zero
 * cost: nothing was delivered); and once the survivors have stopped (returning their admission leases) the
 * member's pool counters in Redis equal what the ledger billed, and the rollups equal the ledger (`svc
 * ledger check`). A second member, its pools exhausted, pays from credit through the same kill: each of its
 * 200s has its row too, and once the sweepers have ended the dead instance's holds its balance is exactly
 * its start less what its rows billed. `npm run bench:cluster` runs the same check through HAProxy at a few
 * hundred requests a second, on one Redis and on a Redis Cluster.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolKey } from '../../../server/metering/pool.redis-store.ts';
import { PoolWindows } from '../../../server/metering/windows.ts';
import { Bed, ROOT, sleep, until, type Instance, type Member } from '../../drills/bed.ts';

const run = promisify(execFile);

/** Workers each sending one request after another, over the processes in turn (the last few as the credit payer). */
const WORKERS = 12;
const CREDIT_WORKERS = 4;
/** The credit payer's balance at the start: far more than the test spends. */
const CREDIT_MICROS = 1_000_000_000;
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
/** Pays from credit: its pools are exhausted. */
let payer: Member;

beforeAll(async () => {
  // A sweep every second, so a survivor settles the dead process's reservations within the test's time.
  bed = new Bed({ config: { plans: Bed.roomyPlans(), gateway: { sweepIntervalSeconds: 1 } } });
  await bed.start();
  const first = await bed.startInstance('svc-1');
  // The second boots while the member signs up (the first ran the migrations).
  [instances, member, payer] = await Promise.all([bed.startInstance('svc-2').then((second) => [first, second]), bed.member(first, 1), bed.member(first, 1)]);
  await bed.db.query(`insert into credit_balance (account_id, balance_micros, currency, pay_from_credit) values ($1, $2, 'USD', true)`, [payer.accountId, CREDIT_MICROS]);
  await bed.db.query(`insert into credit_entry (account_id, amount_micros, currency, kind, balance_after_micros) values ($1, $2, 'USD', 'adjustment', $2)`, [payer.accountId, CREDIT_MICROS]);
  const windows = new PoolWindows('UTC').current();
  for (const window of [windows.day, windows.week, windows.month]) await bed.redis.set(poolKey(payer.accountId, 'fast', window.key), String(1e18));
  const paid = await chatOnce(first, payer.keys[0]!);
  expect(paid.status, 'a turn paid from credit').toBe(200);
}, 120_000);
afterAll(() => bed?.close());

describe('one instance of two killed mid-load', () => {
  it('keeps exactly one ledger row per 200, refunds what the dead one held, and leaves pools equal to the ledger', async () => {
    const [victim, ...survivors] = instances;
    const outcomes: (Outcome & { credit: boolean })[] = [];
    let killed = false;
    let stop = false;
    const killAfter = performance.now() + BEFORE_KILL_MS;
    const workers = Array.from({ length: WORKERS }, async (_, w) => {
      const credit = w >= WORKERS - CREDIT_WORKERS;
      for (let i = w; !stop; i++) {
        // After the kill the load goes on over the survivors, as a load balancer's health check would have it.
        const target = killed && instances[i % instances.length] === victim ? survivors[i % survivors.length]! : instances[i % instances.length]!;
        const outcome = await chatOnce(target, (credit ? payer : member).keys[0]!);
        outcomes.push({ ...outcome, credit });
        // The kill follows one of the victim's replies at once: its other turns are answered around then too.
        if (!killed && target === victim && outcome.status === 200 && outcome.at >= killAfter) {
          victim.child.kill('SIGKILL');
          killed = true;
        }
      }
    });
    await until('the kill', async () => (killed ? true : undefined), 30_000, 10);
    await new Promise((done) => (victim!.child.proc.exitCode === null && victim!.child.proc.signalCode === null ? victim!.child.proc.once('exit', done) : done(undefined)));
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
    // The credit payer's holds have no instance to wait for: past their TTL the sweepers end them.
    await bed.db.query(`update credit_hold set expires_at = now() - interval '1 second' where account_id = $1`, [payer.accountId]);
    await until('the sweepers to end the dead instance\'s credit holds', async () => ((await bed.db.query('select 1 from credit_hold where account_id = $1', [payer.accountId])).rowCount === 0 ? true : undefined), 20_000, 250);
    const { rows: all } = await bed.db.query<{ request_id: string; account_id: string; status: string; cost_micros: string; paid_from_credit: boolean }>(
      'select request_id, account_id, status, cost_micros, paid_from_credit from usage_ledger where account_id = any($1)',
      [[member.accountId, payer.accountId]],
    );
    const rowOf = new Map(all.map((row) => [row.request_id, row]));
    expect(all.length, 'one row per request id').toBe(rowOf.size);
    // Every 200, to the last one before the kill.
    const unbilled = outcomes.filter((o) => o.status === 200 && rowOf.get(o.requestId!)?.status !== 'ok').map((o) => `${o.requestId} (${rowOf.get(o.requestId!)?.status ?? 'no row'})`);
    expect(unbilled, `200s without an ok ledger row (of ${answered.length}; ${cut} cut by the kill)`).toEqual([]);
    const rows = all.filter((row) => row.account_id === member.accountId);
    const creditRows = all.filter((row) => row.account_id === payer.accountId);
    const creditCut = outcomes.filter((o) => o.credit && o.status === 0).length;
    // Rows beyond the 200s: requests the victim had finished with the upstream when it died (billed what
    // was produced). None may be a request nobody sent: every row is one of the cut requests at most.
    for (const [billed, credit, cutHere] of [[rows, false, cut - creditCut], [creditRows, true, creditCut]] as const) {
      const answeredHere = outcomes.filter((o) => o.credit === credit && o.status === 200).length + (credit ? 1 : 0);
      expect(billed.length - answeredHere, credit ? 'credit rows beyond the 200s' : 'rows beyond the 200s').toBeGreaterThanOrEqual(0);
      expect(billed.length - answeredHere).toBeLessThanOrEqual(cutHere);
    }
    expect(creditRows.every((row) => row.paid_from_credit)).toBe(true);
    // Each credit-paid turn was paid once, at what its row billed: its hold ended by its own settlement or a sweeper, never both.
    const spentOnCredit = creditRows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    const { rows: balance } = await bed.db.query<{ balance: string; sum: string }>(
      `select (select balance_micros from credit_balance where account_id = $1)::bigint as balance, (select sum(amount_micros) from credit_entry where account_id = $1)::bigint as sum`,
      [payer.accountId],
    );
    expect(balance[0]).toEqual({ balance: String(CREDIT_MICROS - spentOnCredit), sum: String(CREDIT_MICROS - spentOnCredit) });

    // Survivors stopped gracefully return their leases' unused budget: the pools hold exactly the ledger.
    await Promise.all(survivors.map((instance) => instance.child.stop(10_000)));
    const windows = new PoolWindows('UTC').current();
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    for (const window of [windows.day, windows.week, windows.month]) {
      expect(Number(await bed.redis.get(poolKey(member.accountId, 'fast', window.key))), `fast ${window.window} pool`).toBe(billed);
    }
    const check = await run(process.execPath, [resolve(ROOT, 'bin/svc.js'), 'ledger', 'check'], { env: { ...process.env, DATABASE_URL: bed.database.url } });
    expect(check.stdout).toMatch(/^0 differences/m);
    console.log(
      `kill mid-load: ${answered.length} answered 200 (${outcomes.filter((o) => o.credit && o.status === 200).length} paid from credit), ${cut} cut by the kill, ${all.length} ledger rows, pools = ledger = ${billed} µ, credit spent ${spentOnCredit} µ`,
    );
  }, 120_000);
});

/**
 * Drill (c): Redis restarted under load — a private `redis-server` without persistence, killed and started
 * again empty (the shared Redis is never touched). While it is away admission fails closed (503). After it
 * comes back the pools are reconciled against the ledger (every member's used amount equals its ledger
 * rows' cost again), and nothing leaks: no reservation, checkpoint or stream slot is left once the load
 * ends.
 */
import { Bed, chat, sleep, streamChat, until, type Instance, type Member } from './bed.ts';
import type { DrillResult } from './kill.ts';

const WORKERS = 12;
const BEFORE_MS = 5_000;
const OUTAGE_MS = 5_000;
const AFTER_MS = 6_000;

interface Outcome {
  startedAt: number;
  status: number;
}

async function usedToday(instance: Instance, key: string): Promise<number | null> {
  const response = await fetch(`${instance.url}/api/membership/usage`, { headers: { authorization: `Bearer ${key}` } });
  if (!response.ok) return null;
  const body = (await response.json()) as { pools: { class: string; window: string; used: { amountMicros: number } }[] };
  return body.pools.find((pool) => pool.class === 'fast' && pool.window === 'day')!.used.amountMicros;
}

export async function redisDrill(): Promise<DrillResult> {
  const bed = new Bed({ privateRedis: true, config: { plans: Bed.roomyPlans(), rateLimits: { concurrentStreamsPerAccount: 100 } } });
  const lines: string[] = [];
  try {
    await bed.start();
    const instances = [await bed.startInstance('svc-a'), await bed.startInstance('svc-b')];
    const members: Member[] = [];
    for (let i = 0; i < 4; i++) members.push(await bed.member(instances[i % 2]!, 1));

    const outcomes: Outcome[] = [];
    const start = Date.now();
    const end = start + BEFORE_MS + OUTAGE_MS + AFTER_MS;
    const worker = async (w: number) => {
      for (let i = 0; Date.now() < end; i++) {
        const instance = instances[(w + i) % 2]!;
        const key = members[w % members.length]!.keys[0]!;
        const startedAt = Date.now();
        const status = i % 3 === 0 ? (await streamChat(instance.url, key, { chunks: 20, intervalMs: 50 })).status : (await chat(instance.url, key)).status;
        outcomes.push({ startedAt, status });
        if (status !== 200) await sleep(50);
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    await sleep(BEFORE_MS);
    const usedBefore = await Promise.all(members.map((member) => usedToday(instances[0]!, member.keys[0]!)));
    await bed.privateRedis!.stop();
    const downAt = Date.now();
    await sleep(OUTAGE_MS);
    await bed.privateRedis!.start();
    const upAt = Date.now();
    await load;

    // No leak: once the load is over, nothing is reserved and no stream slot is held.
    const leftovers = async () => {
      const keys = await bed.redis.keys(`${bed.prefix}*`);
      const names = keys.map((key) => key.slice(bed.prefix.length));
      const reservations = names.filter((name) => /^res:[^:]+$/.test(name) && name !== 'res:index').length;
      const index = await bed.redis.zcard('res:index');
      const checkpoints = names.filter((name) => name.startsWith('ckpt:')).length;
      let slots = 0;
      for (const name of names.filter((n) => n.startsWith('streams:'))) slots += await bed.redis.zcount(name, Date.now(), '+inf');
      return { reservations, index, checkpoints, slots };
    };
    const clean = await until(
      'no reservation or stream slot left',
      async () => {
        const left = await leftovers();
        return left.reservations + left.index + left.checkpoints + left.slots === 0 ? left : undefined;
      },
      60_000,
      500,
    ).catch(() => null);
    const left = clean ?? (await leftovers());

    // Reconciled: each member's pool equals what its ledger rows cost, on both instances.
    const ledgerCost = async (accountId: string) =>
      Number((await bed.db.query<{ c: string }>('select coalesce(sum(cost_micros), 0) as c from usage_ledger where account_id = $1', [accountId])).rows[0]!.c);
    const reconciledAfter = await until(
      'every pool to equal its ledger',
      async () => {
        for (const member of members) {
          const cost = await ledgerCost(member.accountId);
          for (const instance of instances) if ((await usedToday(instance, member.keys[0]!)) !== cost) return undefined;
        }
        return Date.now() - upAt;
      },
      60_000,
      500,
    ).catch(() => null);
    const pools = await Promise.all(members.map(async (member) => ({ used: await usedToday(instances[0]!, member.keys[0]!), ledger: await ledgerCost(member.accountId) })));

    const during = outcomes.filter((o) => o.startedAt >= downAt + 500 && o.startedAt < upAt);
    const tally = (list: Outcome[]) => list.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }), {});
    const firstBack = outcomes.filter((o) => o.startedAt >= upAt && o.status === 200).sort((a, b) => a.startedAt - b.startedAt)[0];
    const { rows } = await bed.db.query<{ n: string }>('select count(*) as n from usage_ledger');
    const answered = outcomes.filter((o) => o.status === 200).length;
    lines.push(`${outcomes.length} requests from ${WORKERS} clients over ${((end - start) / 1000).toFixed(0)} s on both instances; Redis killed, started again empty after ${(OUTAGE_MS / 1000).toFixed(0)} s`);
    lines.push(`while it was away: ${during.length} requests answered ${JSON.stringify(tally(during))}; first 200 after it came back: ${firstBack ? `${((firstBack.startedAt - upAt) / 1000).toFixed(1)} s` : 'none'}`);
    lines.push(`pools before the restart (µ): ${usedBefore.join(', ')}; after: ${pools.map((p) => `${p.used} (ledger ${p.ledger})`).join(', ')}`);
    lines.push(`pools equal the ledger on both instances once the load ended (${reconciledAfter === null ? 'NOT within 60 s' : `checked ${(reconciledAfter / 1000).toFixed(1)} s after Redis came back`}); ledger ${rows[0]!.n} rows for ${answered} answered requests`);
    lines.push(`left behind after the load: ${left.reservations} reservations, ${left.index} in the index, ${left.checkpoints} checkpoints, ${left.slots} stream slots`);
    const ok = clean !== null && reconciledAfter !== null && during.length > 0 && during.every((o) => o.status === 503) && Number(rows[0]!.n) >= answered;
    return { name: 'Redis restarted empty under load', ok, lines };
  } finally {
    await bed.close();
  }
}

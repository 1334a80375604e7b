/**
 * Drill (b): PostgreSQL unreachable for 10 s under load (the proxy in front of it cut: the shared server
 * keeps running). Admission must fail closed with 503 while it is away; requests admitted before the cut
 * finish, and their ledger rows wait in the settlement queue and are written when the database is back —
 * not one row lost.
 */
import { Bed, chat, sleep, streamChat, until, type Member } from './bed.ts';
import type { DrillResult } from './kill.ts';

const WORKERS = 16;
const BEFORE_MS = 5_000;
const OUTAGE_MS = 10_000;
const AFTER_MS = 6_000;
/** The instances notice within their 1 s health probe; requests in that second may still be admitted. */
const DETECT_MS = 2_000;

interface Outcome {
  startedAt: number;
  finishedAt: number;
  status: number;
  stream: boolean;
  complete: boolean;
}

export async function postgresDrill(): Promise<DrillResult> {
  const bed = new Bed({ pgProxy: true, config: { plans: Bed.roomyPlans(), rateLimits: { concurrentStreamsPerAccount: 100 } } });
  const lines: string[] = [];
  try {
    await bed.start();
    const instances = [await bed.startInstance('svc-a'), await bed.startInstance('svc-b')];
    const members: Member[] = [];
    for (let i = 0; i < 4; i++) members.push(await bed.member(instances[i % 2]!, 1));
    // Warm the credential caches on both instances, as a running service would have them.
    for (const member of members) for (const instance of instances) await chat(instance.url, member.keys[0]!);
    const warm = 4 * instances.length;

    const outcomes: Outcome[] = [];
    const start = Date.now();
    const end = start + BEFORE_MS + OUTAGE_MS + AFTER_MS;
    const worker = async (w: number) => {
      for (let i = 0; Date.now() < end; i++) {
        const instance = instances[(w + i) % 2]!;
        const key = members[w % members.length]!.keys[0]!;
        const startedAt = Date.now();
        if (i % 3 === 0) {
          // A stream of about 1 s: some are running when the database goes away.
          const result = await streamChat(instance.url, key, { chunks: 20, intervalMs: 50 });
          outcomes.push({ startedAt, finishedAt: Date.now(), status: result.status, stream: true, complete: result.complete });
        } else {
          const result = await chat(instance.url, key);
          outcomes.push({ startedAt, finishedAt: Date.now(), status: result.status, stream: false, complete: result.status === 200 });
        }
        if (outcomes.at(-1)!.status !== 200) await sleep(50);
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    await sleep(BEFORE_MS);
    bed.pgProxy!.cut();
    const cutAt = Date.now();
    await sleep(OUTAGE_MS);
    bed.pgProxy!.restore();
    const restoredAt = Date.now();
    await load;

    const answered = outcomes.filter((o) => o.status === 200 && o.complete).length + warm;
    const rows = await until(
      'the ledger to hold every answered request',
      async () => {
        const { rows } = await bed.db.query<{ n: string }>('select count(*) as n from usage_ledger');
        const n = Number(rows[0]!.n);
        return n >= answered ? n : undefined;
      },
      60_000,
      250,
    ).catch(async () => Number((await bed.db.query<{ n: string }>('select count(*) as n from usage_ledger')).rows[0]!.n));
    const { rows: byStatus } = await bed.db.query<{ status: string; n: string }>('select status, count(*) as n from usage_ledger group by status');

    const during = outcomes.filter((o) => o.startedAt >= cutAt + DETECT_MS && o.startedAt < restoredAt);
    const tally = (list: Outcome[]) => list.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }), {});
    const firstBack = outcomes.filter((o) => o.startedAt >= restoredAt && o.status === 200).sort((a, b) => a.startedAt - b.startedAt)[0];
    const admittedWhileDown = during.filter((o) => o.status === 200).length;
    const finishedDuringCut = outcomes.filter((o) => o.status === 200 && o.complete && o.finishedAt > cutAt && o.finishedAt < restoredAt).length;
    lines.push(`${outcomes.length} requests from ${WORKERS} clients over ${((end - start) / 1000).toFixed(0)} s, both instances; PostgreSQL cut for ${(OUTAGE_MS / 1000).toFixed(0)} s`);
    lines.push(`while it was away (from ${DETECT_MS / 1000} s after the cut): ${during.length} requests answered ${JSON.stringify(tally(during))}; admitted: ${admittedWhileDown}`);
    lines.push(`requests admitted before the cut that finished while it was away (their rows queued): ${finishedDuringCut}; first 200 after it came back: ${firstBack ? `${((firstBack.startedAt - restoredAt) / 1000).toFixed(1)} s` : 'none'}`);
    lines.push(`ledger: ${rows} rows for ${answered} answered requests (${JSON.stringify(Object.fromEntries(byStatus.map((r) => [r.status, Number(r.n)])))}) — lost: ${Math.max(0, answered - rows)}`);
    const ok = rows >= answered && admittedWhileDown === 0 && during.length > 0 && during.every((o) => o.status === 503) && firstBack !== undefined;
    return { name: 'PostgreSQL away for 10 s under load', ok, lines };
  } finally {
    await bed.close();
  }
}

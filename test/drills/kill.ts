/**
 * Drill (a): kill -9 an instance under 50 streams, with the default checkpoints (at the first token, then
 * every second). Every stream must be billed for what it delivered (less at most one checkpoint interval:
 * the sweeper settles each at the dead instance's last checkpoint), ≥ 95 % of what the clients received in
 * all and never past a reservation, and the stream slots it held must be free again within 30 s (the
 * heartbeat stops, another instance's sweeper reclaims them) — not at the reservation's 30-minute TTL.
 * `test/integration/metering/crash-bills-delivered.test.ts` is the same drill, shortened, in `npm test`.
 */
import { Bed, sleep, streamChat, until, type Member } from './bed.ts';

export interface DrillResult {
  name: string;
  ok: boolean;
  lines: string[];
}

const STREAMS_PER_MEMBER = 5;
const MEMBERS = 10;
/** One token every 20 ms: 50 tokens a second, 50 in a checkpoint interval (1 s, the default). */
const INTERVAL_MS = 20;
const CHECKPOINT_SECONDS = 1;
/** How long the streams run before the kill: what a crash may lose (one interval) is then under 5 %. */
const RUN_MS = 30_000;

export async function killDrill(): Promise<DrillResult> {
  const bed = new Bed({ config: { plans: Bed.roomyPlans(), rateLimits: { concurrentStreamsPerAccount: STREAMS_PER_MEMBER } } });
  const lines: string[] = [];
  try {
    await bed.start();
    const victim = await bed.startInstance('svc-a');
    const survivor = await bed.startInstance('svc-b');
    // Five stream keys and a probe key each; the cap (5 streams an account) is full while the streams run.
    const members: Member[] = [];
    for (let i = 0; i < MEMBERS; i++) members.push(await bed.member(survivor, STREAMS_PER_MEMBER + 1));

    const received = new Map<string, number>();
    const streams = members.flatMap((member) =>
      member.keys.slice(0, STREAMS_PER_MEMBER).map((key, i) => {
        const keyId = member.keyIds[i]!;
        received.set(keyId, 0);
        return streamChat(victim.url, key, { intervalMs: INTERVAL_MS, chunks: 100_000 }, () => received.set(keyId, received.get(keyId)! + 1));
      }),
    );
    // Every stream producing and checkpointed, then running long enough that one interval is under 5 % of it.
    await until('50 streams to have produced', async () => ([...received.values()].every((n) => n > 0) ? true : undefined), 60_000);
    await until('a checkpoint of every stream', async () => ((await bed.redis.keys(`${bed.prefix}ckpt:*`)).length >= MEMBERS * STREAMS_PER_MEMBER ? true : undefined), 60_000);
    await sleep(RUN_MS);
    const refusedBefore = (await streamChat(survivor.url, members[0]!.keys[STREAMS_PER_MEMBER]!, { chunks: 1 })).status;

    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((done) => victim.child.proc.once('exit', done));
    const results = await Promise.all(streams);

    // Stream slots: each member's probe stream on the survivor is refused (429) until the slots are reclaimed.
    const freedAfter = new Map<string, number>();
    await until(
      'every member to be able to stream again',
      async () => {
        await Promise.all(
          members
            .filter((member) => !freedAfter.has(member.accountId))
            .map(async (member) => {
              const probe = await streamChat(survivor.url, member.keys[STREAMS_PER_MEMBER]!, { chunks: 1 });
              if (probe.status === 200) freedAfter.set(member.accountId, Date.now() - killedAt);
            }),
        );
        return freedAfter.size === members.length ? true : undefined;
      },
      120_000,
      500,
    );

    // The ledger: one row per killed stream, written by the sweeper from the last checkpoint.
    const keyIds = [...received.keys()];
    const rows = await until(
      'a ledger row for every killed stream',
      async () => {
        const { rows } = await bed.db.query<{ credential_id: string; output_tokens: number; status: string; estimated: boolean; cost_micros: string; reserved_micros: string }>(
          'select credential_id, output_tokens, status, estimated, cost_micros, reserved_micros from usage_ledger where credential_id = any($1)',
          [keyIds],
        );
        return rows.length >= keyIds.length ? rows : undefined;
      },
      120_000,
      500,
    );
    const perCheckpoint = (CHECKPOINT_SECONDS * 1000) / INTERVAL_MS;
    let receivedTotal = 0;
    let billedTotal = 0;
    let worstShort = 0;
    let worstOver = 0;
    for (const row of rows) {
      const got = received.get(row.credential_id)!;
      receivedTotal += got;
      billedTotal += row.output_tokens;
      worstShort = Math.max(worstShort, got - row.output_tokens);
      worstOver = Math.max(worstOver, row.output_tokens - got);
    }
    const freed = [...freedAfter.values()].sort((a, b) => a - b);
    const statuses = rows.reduce<Record<string, number>>((acc, row) => ({ ...acc, [row.status]: (acc[row.status] ?? 0) + 1 }), {});
    const broken = results.filter((r) => !r.complete).length;
    const withinCheckpoint = worstShort <= perCheckpoint + 1000 / INTERVAL_MS && worstOver <= 1000 / INTERVAL_MS;
    const share = billedTotal / receivedTotal;
    const withinReservations = rows.every((row) => Number(row.cost_micros) <= Number(row.reserved_micros));
    const slotsInTime = freed[freed.length - 1]! <= 30_000;
    lines.push(`streams on the killed instance: ${results.length} (${broken} cut off by the kill); a probe stream before the kill: ${refusedBefore} (cap full)`);
    lines.push(`tokens the clients received: ${receivedTotal}; billed by the sweeper: ${billedTotal}, ${(100 * share).toFixed(1)} % (target ≥ 95 %; ${rows.length} rows: ${JSON.stringify(statuses)}, ${rows.filter((r) => r.estimated).length} marked estimated, ${withinReservations ? 'none' : 'some'} past the reservation)`);
    lines.push(`per stream, billed short of received by at most ${worstShort} tokens, over by at most ${worstOver} (one checkpoint = ${perCheckpoint} tokens at ${1000 / INTERVAL_MS} tokens/s)`);
    lines.push(`stream slots free again after ${(freed[0]! / 1000).toFixed(1)}–${(freed[freed.length - 1]! / 1000).toFixed(1)} s (all ${members.length} accounts; limit 30 s)`);
    return { name: 'kill -9 under 50 streams', ok: rows.length === results.length && withinCheckpoint && share >= 0.95 && withinReservations && slotsInTime && refusedBefore === 429, lines };
  } finally {
    await bed.close();
  }
}

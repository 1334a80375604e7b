/**
 * Live-usage fan-out: `sockets` graphql-ws sockets (real `ws` clients speaking graphql-transport-ws), half on
 * each of two svc instances, each with one `usageUpdated` subscription. With `accounts` 1 (the default) all
 * are the same member's — the worst case: every turn wakes every subscription. With more, the sockets are
 * dealt round the members in turn (sockets / accounts each) and only the first member's turns run — the
 * realistic case: a turn wakes its member's few subscriptions among many open ones. Then one chat turn a
 * second, alternating instances, so half the watchers learn of each turn through Redis from the other
 * instance. Delivery, missed and stale count the turning member's sockets.
 *
 * Delivery time of a turn at a socket: from the turn's request to the last update the socket received before
 * the next turn (admission and settlement may arrive as one update or two; the last carries the settled
 * amount). A socket with no update for a turn is "missed"; one whose last update does not show more used
 * than the turn before is "stale". RSS per open socket: both instances' RSS growth from before the sockets
 * opened to when all were subscribed, over the sockets. Account reads per turn: PostgreSQL's count of scans
 * of the `account` table over the turns (every usage report reads the payer's package there, so it shows
 * how many reports the wake-ups made), after a wait for the backends to flush their statistics. svc CPU per
 * turn: both instances' CPU time (from /proc, valid on a loaded machine) from the first turn to the end of
 * that wait, over the turns: what waking and answering every subscription costs. Over the frames the turning
 * sockets received in the turns, it is svc's CPU per delivered frame. The load generator's own CPU over the
 * turns (this process, one core) says whether delivery times are the client's: receiving 10,000 sockets'
 * frames on one core takes long enough to be most of them. First arrival: per turn, the earliest delivery
 * of any socket; its median is what the turn itself takes (admission, settlement, Redis, one execution).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { WebSocket } from 'ws';
import { percentile, plainBody, type Metrics } from './scenarios.ts';
import { sampleProc } from './procs.ts';
import { signUpAndMintKey, type SvcGroup } from './svc.ts';

export interface FanOutParams {
  sockets: number;
  turns: number;
  /** Members the sockets are dealt round (1: all one member's); the turns are the first one's. */
  accounts?: number;
}

const SUBSCRIPTION = 'subscription { usageUpdated { pools { used { amountMicros } } } }';
/** Sockets opening at once: a browser fleet reconnecting, not a single burst of 10,000 handshakes. */
const OPENING = 50;
const TURN_MS = 1000;

interface Watcher {
  socket: WebSocket;
  /** Arrival time (performance.now(), ms) and the used total of every update after the first. */
  updates: [at: number, used: number][];
}

/** The sum of every pool's used micros in a `next` message (the turn's cost shows in each window of its class). */
export function usedTotal(message: string): number {
  let total = 0;
  for (const match of message.matchAll(/"amountMicros":(\d+)/g)) total += Number(match[1]);
  return total;
}

/**
 * Per turn and socket, the delivery time (ms) or why there is none. `starts[i]` is when turn i was sent; an
 * update belongs to the last turn started before it arrived.
 */
export function deliveries(starts: number[], updates: [at: number, used: number][][], windowMs: number): { delaysMs: number[]; missed: number; stale: number } {
  const delaysMs: number[] = [];
  let missed = 0;
  let stale = 0;
  for (const list of updates) {
    let previous = -1;
    for (let turn = 0; turn < starts.length; turn++) {
      const from = starts[turn]!;
      const to = starts[turn + 1] ?? from + windowMs;
      let last: [number, number] | undefined;
      for (const update of list) if (update[0] >= from && update[0] < to) last = update;
      if (!last) {
        missed++;
        continue;
      }
      if (last[1] <= previous) stale++;
      previous = last[1];
      delaysMs.push(last[0] - from);
    }
  }
  return { delaysMs, missed, stale };
}

export async function fanOut(group: SvcGroup, params: FanOutParams, say: (text: string) => void): Promise<Metrics> {
  const [a, b] = group.instances;
  if (!a || !b) throw new Error('fan-out wants two svc instances');
  const rssBefore = await rssKb(group);
  const accounts = Math.max(1, params.accounts ?? 1);
  const authorizations = [group.headers.authorization!];
  for (let i = 1; i < accounts; i++) authorizations.push(`Bearer ${await signUpAndMintKey(a.origin, group.databaseUrl, `bench-fanout-${i}-${randomBytes(4).toString('hex')}@example.com`)}`);
  const watchers: Watcher[] = [];
  /** The turning member's watchers: the ones a turn wakes. */
  const turning: Watcher[] = [];
  const refused = new Map<string, number>();
  const t0 = performance.now();
  try {
    for (let opened = 0; opened < params.sockets; opened += OPENING) {
      const batch = Array.from({ length: Math.min(OPENING, params.sockets - opened) }, (_, i) => {
        const n = opened + i;
        // Alternate instances within each member's sockets too, so both instances hold the turning member's.
        const account = n % accounts;
        const instance = Math.floor(n / accounts) % 2 ? b : a;
        return subscribe(instance.origin, authorizations[account]!).then((watcher) => {
          if (account === 0) turning.push(watcher);
          return watcher;
        });
      });
      for (const outcome of await Promise.allSettled(batch)) {
        if (outcome.status === 'fulfilled') watchers.push(outcome.value);
        else refused.set(outcome.reason.message, (refused.get(outcome.reason.message) ?? 0) + 1);
      }
    }
    const subscribed = watchers.length;
    say(
      `fan-out: ${subscribed} subscriptions of ${accounts} member(s) open in ${((performance.now() - t0) / 1000).toFixed(1)} s${refused.size ? `; refused: ${[...refused].map(([why, n]) => `${n}× ${why}`).join(', ')}` : ''}`,
    );
    // Let the first reports and the sockets' buffers settle before RSS is read.
    await new Promise((r) => setTimeout(r, 2000));
    const rssOpen = await rssKb(group);
    for (const w of watchers) w.updates.length = 0;

    const accountScansBefore = await accountScans(group);
    const cpuBefore = await cpuMs(group);
    const loadCpuBefore = process.cpuUsage();
    const starts: number[] = [];
    let turnsFailed = 0;
    for (let turn = 0; turn < params.turns; turn++) {
      const start = performance.now();
      starts.push(start);
      const origin = turn % 2 ? b.origin : a.origin;
      const response = await fetch(`${origin}/v1/chat/completions`, { method: 'POST', headers: group.headers, body: plainBody });
      await response.text();
      // A refused turn is a finding (the fan-out's reads can starve admission's database), not a reason to stop.
      if (response.status !== 200) {
        turnsFailed++;
        say(`fan-out: turn ${turn + 1} answered ${response.status}`);
      }
      await new Promise((r) => setTimeout(r, Math.max(0, start + TURN_MS - performance.now())));
    }
    const loadCpu = process.cpuUsage(loadCpuBefore);
    const frames = turning.reduce((sum, w) => sum + w.updates.length, 0);
    const firstUs = starts.map((from, turn) => {
      const to = starts[turn + 1] ?? from + TURN_MS;
      let first = Infinity;
      for (const w of turning) for (const [at] of w.updates) if (at >= from && at < to && at < first) first = at;
      return (first - from) * 1000;
    });
    const accountScansAfter = await accountScans(group, STATS_FLUSH_MS);
    const cpuAfter = await cpuMs(group);
    const { delaysMs, missed, stale } = deliveries(
      starts,
      turning.map((w) => w.updates),
      TURN_MS,
    );
    const us = delaysMs.map((ms) => ms * 1000);
    return {
      'fanout.sockets': params.sockets,
      'fanout.subscribed': subscribed,
      'fanout.accounts': accounts,
      'fanout.turningSockets': turning.length,
      'fanout.turns': params.turns,
      'fanout.deliveryP50Us': percentile(us, 50),
      'fanout.deliveryP95Us': percentile(us, 95),
      'fanout.deliveryP99Us': percentile(us, 99),
      'fanout.missed': missed,
      'fanout.stale': stale,
      'fanout.turnsFailed': turnsFailed,
      'fanout.rssMbBefore': rssBefore / 1024,
      'fanout.rssMbOpen': rssOpen / 1024,
      'fanout.rssKbPerSocket': (rssOpen - rssBefore) / Math.max(1, subscribed),
      'fanout.svcCpuMsPerTurn': (cpuAfter - cpuBefore) / Math.max(1, params.turns),
      'fanout.framesPerTurn': frames / Math.max(1, params.turns),
      'fanout.svcCpuUsPerFrame': ((cpuAfter - cpuBefore) * 1000) / Math.max(1, frames),
      'fanout.loadCpuMsPerTurn': (loadCpu.user + loadCpu.system) / 1000 / Math.max(1, params.turns),
      'fanout.firstP50Us': percentile(firstUs, 50),
      'fanout.accountReadsPerTurn': (accountScansAfter - accountScansBefore) / Math.max(1, params.turns),
    };
  } finally {
    for (const w of watchers) w.socket.terminate();
  }
}

/** PostgreSQL 15 backends flush table statistics within 10 s of going idle. */
const STATS_FLUSH_MS = 11_000;

/** Scans of the `account` table so far, counted by PostgreSQL, once `waitMs` has let the backends report. */
async function accountScans(group: SvcGroup, waitMs = 0): Promise<number> {
  await new Promise((r) => setTimeout(r, waitMs));
  const db = new pg.Client({ connectionString: group.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ scans: string }>(`select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans from pg_stat_user_tables where relname = 'account'`);
    return Number(rows[0]?.scans ?? 0);
  } finally {
    await db.end();
  }
}

async function cpuMs(group: SvcGroup): Promise<number> {
  const samples = await Promise.all(group.instances.map((i) => sampleProc(i.pid)));
  return samples.reduce((sum, s) => sum + s.cpuMs, 0);
}

async function rssKb(group: SvcGroup): Promise<number> {
  const samples = await Promise.all(group.instances.map((i) => sampleProc(i.pid)));
  return samples.reduce((sum, s) => sum + s.rssKb, 0);
}

/** One socket, signed in with the member's key, subscribed; resolves at the subscription's first (current) state. */
function subscribe(origin: string, authorization: string): Promise<Watcher> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${origin.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const watcher: Watcher = { socket, updates: [] };
    let first = true;
    const fail = (why: string) => {
      socket.terminate();
      reject(new Error(`fan-out socket: ${why}`));
    };
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization } })));
    socket.on('message', (data) => {
      const at = performance.now();
      const text = String(data);
      if (text.startsWith('{"type":"connection_ack"')) {
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: SUBSCRIPTION } }));
        return;
      }
      if (text.includes('"type":"next"')) {
        if (text.includes('"errors"')) return fail(text.slice(0, 300));
        if (first) {
          first = false;
          resolve(watcher);
        } else watcher.updates.push([at, usedTotal(text)]);
        return;
      }
      if (text.includes('"type":"error"') || text.includes('"type":"complete"')) fail(text.slice(0, 300));
    });
    socket.on('error', (error) => fail(error.message));
    socket.on('close', (code, reason) => {
      if (first) fail(`closed ${code} ${String(reason)}`);
    });
  });
}

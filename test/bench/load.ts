/**
 * Load generators. Latency is timed with `process.hrtime.bigint()` (microseconds), from the moment the
 * request is handed to undici (or, for the fixed-rate generator, the moment it was *due*, so a slow system
 * cannot hide queueing — no coordinated omission) until the whole body has arrived.
 */
import autocannon from 'autocannon';
import { Client, Pool } from 'undici';

export interface Target {
  origin: string;
  path: string;
  headers: Record<string, string>;
}

const now = () => process.hrtime.bigint();
const us = (from: bigint, to: bigint) => Number(to - from) / 1000;

/**
 * S1: one connection, `count` requests one after another (after `warmup` untimed ones). A system that sends
 * `server-timing` (svc) also has its own steps collected, in microseconds by step name.
 */
export async function sequential(
  target: Target,
  body: string,
  count: number,
  warmup: number,
): Promise<{ latenciesUs: number[]; failures: number; stepsUs: Record<string, number[]> }> {
  const client = new Client(target.origin, { keepAliveTimeout: 60_000, pipelining: 1 });
  const latenciesUs: number[] = [];
  const stepsUs: Record<string, number[]> = {};
  let failures = 0;
  try {
    for (let i = 0; i < warmup + count; i++) {
      const start = now();
      const res = await client.request({ method: 'POST', path: target.path, headers: target.headers, body });
      await res.body.arrayBuffer();
      const end = now();
      if (res.statusCode !== 200) failures++;
      if (i < warmup) continue;
      latenciesUs.push(us(start, end));
      collectSteps(stepsUs, res.headers['server-timing']);
    }
  } finally {
    await client.close();
  }
  return { latenciesUs, failures, stepsUs };
}

/** Adds a `server-timing` header's steps (`name;dur=<ms>`, svc sends them) to `stepsUs`, in microseconds. */
function collectSteps(stepsUs: Record<string, number[]>, header: string | string[] | undefined): void {
  if (typeof header !== 'string') return;
  for (const [, name, ms] of header.matchAll(/([\w-]+);dur=([\d.]+)/g)) (stepsUs[name!] ??= []).push(Number(ms) * 1000);
}

/**
 * S2: open loop at `rate` req/s for `durationMs`; a request not answered within `timeoutMs` fails. `dueMs[i]`
 * is when the request of `latenciesUs[i]` was due, in ms since the epoch (`tail.ts` lays them beside the
 * system's own timeline).
 */
export async function fixedRate(
  target: Target,
  body: string,
  rate: number,
  durationMs: number,
  timeoutMs = 10_000,
): Promise<{ latenciesUs: number[]; dueMs: number[]; sent: number; ok: number }> {
  const pool = new Pool(target.origin, { connections: 4096, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const latenciesUs: number[] = [];
  const dueMs: number[] = [];
  const total = Math.round((rate * durationMs) / 1000);
  const intervalNs = BigInt(Math.round(1e9 / rate));
  const inflight: Promise<void>[] = [];
  let ok = 0;
  const start = now();
  const epochMs = performance.timeOrigin + performance.now();
  const fire = (due: bigint) =>
    pool
      .request({ method: 'POST', path: target.path, headers: target.headers, body })
      .then(async (res) => {
        await res.body.arrayBuffer();
        if (res.statusCode === 200) {
          ok++;
          latenciesUs.push(us(due, now()));
          dueMs.push(epochMs + Number(due - start) / 1e6);
        }
      })
      .catch(() => undefined);
  let sent = 0;
  while (sent < total) {
    const t = now();
    while (sent < total && start + BigInt(sent) * intervalNs <= t) {
      inflight.push(fire(start + BigInt(sent) * intervalNs));
      sent++;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inflight);
  await pool.close();
  return { latenciesUs, dueMs, sent, ok };
}

/**
 * S3: closed loop, `connections` workers each sending its next request when the last one finished.
 * At the deadline every worker lets its request in flight finish (no request is cut off, so svc's
 * ledger can be compared exactly with what the upstream emitted); req/s counts completions before it.
 */
export async function closedLoop(target: Target, body: string, connections: number, durationMs: number): Promise<{ rps: number; ok: number; errors: number }> {
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const options = { method: 'POST' as const, path: target.path, headers: target.headers, body };
  let ok = 0;
  let errors = 0;
  const start = now();
  const deadline = start + BigInt(durationMs) * 1_000_000n;
  // The raw dispatch API (no Readable per response), so the generator costs little of its core.
  const once = () =>
    new Promise<number>((resolve) => {
      let status = 0;
      pool.dispatch(options, {
        onConnect() {},
        onHeaders(statusCode: number) {
          status = statusCode;
          return true;
        },
        onData() {
          return true;
        },
        onComplete() {
          resolve(status);
        },
        onError() {
          resolve(0);
        },
      });
    });
  const worker = async () => {
    while (now() < deadline) {
      const status = await once();
      if (status === 200) {
        if (now() <= deadline) ok++;
      } else errors++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  await pool.close();
  return { rps: ok / (durationMs / 1000), ok, errors };
}

/**
 * S3 over several instances of one system (`--instances=N`): the same closed loop, each request sent to
 * the next target in turn (a round-robin in the generator itself, no proxy in between). Counts per target.
 */
export async function closedLoopRoundRobin(
  targets: readonly Target[],
  body: string,
  connections: number,
  durationMs: number,
): Promise<{ rps: number; ok: number; errors: number; perTarget: { rps: number; ok: number; errors: number }[] }> {
  const perConnection = Math.max(1, Math.ceil(connections / targets.length));
  const pools = targets.map((target) => new Pool(target.origin, { connections: perConnection, pipelining: 1, keepAliveTimeout: 60_000 }));
  const perTarget = targets.map(() => ({ ok: 0, errors: 0 }));
  let next = 0;
  const start = now();
  const deadline = start + BigInt(durationMs) * 1_000_000n;
  const once = (index: number) =>
    new Promise<number>((resolve) => {
      let status = 0;
      const target = targets[index]!;
      pools[index]!.dispatch(
        { method: 'POST', path: target.path, headers: target.headers, body },
        {
          onConnect() {},
          onHeaders(statusCode: number) {
            status = statusCode;
            return true;
          },
          onData() {
            return true;
          },
          onComplete() {
            resolve(status);
          },
          onError() {
            resolve(0);
          },
        },
      );
    });
  const worker = async () => {
    while (now() < deadline) {
      const index = next++ % targets.length;
      const status = await once(index);
      if (status === 200) {
        if (now() <= deadline) perTarget[index]!.ok++;
      } else perTarget[index]!.errors++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  await Promise.all(pools.map((pool) => pool.close()));
  const seconds = durationMs / 1000;
  const ok = perTarget.reduce((sum, t) => sum + t.ok, 0);
  const errors = perTarget.reduce((sum, t) => sum + t.errors, 0);
  return { rps: ok / seconds, ok, errors, perTarget: perTarget.map((t) => ({ ...t, rps: t.ok / seconds })) };
}

/** S3 with autocannon instead (`--autocannon`): it cuts requests in flight at the end, so the ledger check then reports those as client disconnects. */
export async function closedLoopAutocannon(target: Target, body: string, connections: number, durationMs: number): Promise<{ rps: number; ok: number; errors: number }> {
  const result = await autocannon({
    url: target.origin + target.path,
    method: 'POST',
    headers: target.headers,
    body,
    connections,
    pipelining: 1,
    duration: durationMs / 1000,
  });
  const ok = result['2xx'];
  return { rps: ok / (result.duration || durationMs / 1000), ok, errors: result.errors + result.non2xx + result.timeouts };
}

export interface StreamResult {
  /** Time to the first event carrying content, per stream. */
  ttftUs: number[];
  /** Gaps between consecutive content events, over all streams. */
  gapsUs: number[];
  streams: number;
  /** Streams that delivered every content chunk and `[DONE]`. */
  complete: number;
  chunksExpected: number;
  chunksReceived: number;
  /** Content chunks received by every stream, the unmeasured first ones included (for CPU per chunk). */
  chunksRelayed: number;
  /** The system's own steps per stream, from `server-timing` (svc), in microseconds by step name. */
  stepsUs: Record<string, number[]>;
}

/** A chat chunk with content, or an Anthropic `text_delta` with text. */
const CONTENT = /"content":\s*"[^"]|"text_delta","text":"[^"]|^event: response\.output_text\.delta/;

export interface StreamOptions {
  /** Streams each worker runs back to back on a kept-alive connection. */
  perWorker: number;
  /** Worker i starts at i × staggerMs / concurrency, so stream starts are spread evenly, not one burst. */
  staggerMs: number;
  /** Leave each worker's first stream out of the numbers (it paid for the TCP connection). */
  skipFirst: boolean;
  timeoutMs?: number;
}

/**
 * S4: `concurrency` workers, each running streams one after another, expected to carry `chunks` content
 * events each. With a stagger of one stream's duration, about `concurrency` streams are open at any time
 * and they start at a steady rate, which is what a gateway with that many concurrent users sees.
 */
export async function streams(target: Target, body: string, concurrency: number, chunks: number, options: StreamOptions): Promise<StreamResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const pool = new Pool(target.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const result: StreamResult = { ttftUs: [], gapsUs: [], streams: 0, complete: 0, chunksExpected: 0, chunksReceived: 0, chunksRelayed: 0, stepsUs: {} };
  const one = async (measured: boolean) => {
    const ttft: number[] = [];
    const gaps: number[] = [];
    const start = now();
    let last = 0n;
    let count = 0;
    let done = false;
    let pending = '';
    let timing: string | string[] | undefined;
    try {
      const res = await pool.request({ method: 'POST', path: target.path, headers: target.headers, body });
      timing = res.headers['server-timing'];
      await new Promise<void>((resolve, reject) => {
        res.body.setEncoding('utf8');
        res.body.on('data', (text: string) => {
          const at = now();
          pending += text;
          let cut = pending.indexOf('\n\n');
          while (cut !== -1) {
            const event = pending.slice(0, cut);
            pending = pending.slice(cut + 2);
            if (event === 'data: [DONE]' || event.startsWith('event: message_stop') || event.startsWith('event: response.completed')) done = true;
            else if (CONTENT.test(event)) {
              if (count === 0) ttft.push(us(start, at));
              else gaps.push(us(last, at));
              last = at;
              count++;
            }
            cut = pending.indexOf('\n\n');
          }
        });
        res.body.on('end', resolve);
        res.body.on('error', reject);
      });
    } catch {
      // counted as incomplete below
    }
    result.chunksRelayed += count;
    if (!measured) return;
    result.streams++;
    result.chunksExpected += chunks;
    result.chunksReceived += count;
    if (done && count === chunks) result.complete++;
    result.ttftUs.push(...ttft);
    collectSteps(result.stepsUs, timing);
    for (const gap of gaps) result.gapsUs.push(gap);
  };
  const worker = async (index: number) => {
    if (options.staggerMs > 0) await new Promise((r) => setTimeout(r, (index * options.staggerMs) / concurrency));
    for (let i = 0; i < options.perWorker; i++) await one(!(options.skipFirst && i === 0));
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
  await pool.close();
  return result;
}

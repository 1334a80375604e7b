/**
 * The systems compared, each started as its own pinned process on loopback:
 *   direct       the load generator talks to the scripted upstream itself (the baseline);
 *   passthrough  node:http + undici Pool, no features (the Node ceiling);
 *   portkey      Portkey's open-source gateway from npm, `--headless`;
 *   svc          see svc.ts;
 *   svc-libs     the same svc with its chat lane and HTTP/1.1 pool swapped for Fastify's route and undici's Pool
 *                (`gateway.httpLayer: fastify`, `gateway.upstreamClient: undici`): what the home-made code earns.
 * The scripted upstream runs on the load generator's core; every system under test on the other one.
 */
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import type { Script } from '../fixtures/scripted-upstream.ts';
import type { Target } from './load.ts';
import { freePort, nodeCommand, spawnPinned, waitForPort, type Child } from './procs.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
export const SUT_CORE = 0;
export const LOAD_CORE = 1;

export interface System {
  name: 'direct' | 'passthrough' | 'portkey' | 'svc' | 'svc-libs';
  /** The process whose RSS and CPU S5 reports (for `direct`, the upstream itself). */
  pid: number;
  target(stream: boolean): Target;
  stop(): Promise<void>;
}

export interface UpstreamStats {
  requests: number;
  aborted: number;
  promptTokens: number;
  completionTokens: number;
}

/** What the upstream counted between two readings of its stats. */
export function statsDelta(before: UpstreamStats, after: UpstreamStats): UpstreamStats {
  return {
    requests: after.requests - before.requests,
    aborted: after.aborted - before.aborted,
    promptTokens: after.promptTokens - before.promptTokens,
    completionTokens: after.completionTokens - before.completionTokens,
  };
}

export function statsSum(a: UpstreamStats, b: UpstreamStats): UpstreamStats {
  return { requests: a.requests + b.requests, aborted: a.aborted + b.aborted, promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens };
}

export interface Upstream {
  origin: string;
  pid: number;
  setScript(script: Partial<Script>): Promise<void>;
  stats(): Promise<UpstreamStats>;
  /** Every chat reply delivered whole, by the gateway's `x-request-id`, with its prompt and completion tokens. */
  delivered(): Promise<Delivered>;
  stop(): Promise<void>;
}

/** Per request id: tokens of every reply delivered for it, and how many replies (more than one: the gateway sent it again). */
export type Delivered = [requestId: string, promptTokens: number, completionTokens: number, replies: number][];

export async function startUpstream(log: string): Promise<Upstream> {
  const port = await freePort();
  const child = spawnPinned('scripted upstream', process.execPath, [resolve(import.meta.dirname, 'upstream-main.ts'), String(port)], {
    core: LOAD_CORE,
    ipc: true,
    log,
  });
  await waitForPort(port, child);
  let seq = 0;
  const ask = <T>(message: object, match: (reply: { type: string; id?: number }) => boolean): Promise<T> =>
    new Promise((resolveReply) => {
      const onMessage = (reply: { type: string; id?: number }) => {
        if (!match(reply)) return;
        child.proc.off('message', onMessage);
        resolveReply(reply as T);
      };
      child.proc.on('message', onMessage);
      child.proc.send(message);
    });
  return {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid,
    setScript: async (script) => {
      await ask({ type: 'script', script }, (reply) => reply.type === 'ok');
    },
    stats: async () => {
      const id = ++seq;
      const reply = await ask<{ stats: UpstreamStats }>({ type: 'stats', id }, (r) => r.type === 'stats' && r.id === id);
      return reply.stats;
    },
    delivered: async () => {
      const id = ++seq;
      const reply = await ask<{ entries: [string, [number, number, number]][] }>({ type: 'delivered', id }, (r) => r.type === 'delivered' && r.id === id);
      return reply.entries.map(([requestId, [prompt, completion, replies]]) => [requestId, prompt, completion, replies]);
    },
    stop: () => child.stop(),
  };
}

const json = { 'content-type': 'application/json' };

export function directSystem(upstream: Upstream): System {
  return {
    name: 'direct',
    pid: upstream.pid,
    target: () => ({ origin: upstream.origin, path: '/v1/chat/completions', headers: json }),
    stop: async () => undefined,
  };
}

/** Cores for the systems under test: every core but the load generator's, or the one SUT core on a 2-core machine. */
export function sutCores(): number[] {
  const all = Array.from({ length: cpus().length }, (_, i) => i).filter((core) => core !== LOAD_CORE);
  return all.length > 0 ? all : [SUT_CORE];
}

async function startChild(name: string, args: string[], port: number, log: string, env: Record<string, string> = {}, core = SUT_CORE, wrap: string[] = []): Promise<Child> {
  const node = nodeCommand(args, wrap);
  const child = spawnPinned(name, node.command, node.args, { core, log, cwd: ROOT, env });
  await waitForPort(port, child, node.listenMs);
  return child;
}

/**
 * `wrap`: a command the passthrough runs under, as svc's (`SvcOptions.wrap`). `burnChunkUs`: CPU it spins per
 * relayed chunk (`burn.ts`).
 */
export async function startPassthrough(upstream: Upstream, log: string, core = SUT_CORE, wrap: string[] = [], burnChunkUs = 0): Promise<System> {
  const port = await freePort();
  const env: Record<string, string> = burnChunkUs > 0 ? { BENCH_BURN_CHUNK_US: String(burnChunkUs) } : {};
  const child = await startChild('passthrough', [resolve(import.meta.dirname, 'passthrough.ts'), String(port), upstream.origin], port, log, env, core, wrap);
  return {
    name: 'passthrough',
    pid: child.pid,
    target: () => ({ origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: json }),
    stop: () => child.stop(),
  };
}

export async function startPortkey(upstream: Upstream, log: string): Promise<System> {
  const port = await freePort();
  const entry = resolve(ROOT, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  const shim = resolve(import.meta.dirname, 'portkey-shim.ts');
  const child = await startChild('portkey', ['--import', shim, entry, '--headless', `--port=${port}`], port, log, { NODE_ENV: 'production' });
  const headers = {
    ...json,
    authorization: 'Bearer sk-bench',
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `${upstream.origin}/v1`,
  };
  return {
    name: 'portkey',
    pid: child.pid,
    target: () => ({ origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers }),
    stop: () => child.stop(),
  };
}

/** Upstream counters once they stop moving (an overloaded system keeps forwarding requests its clients gave up on). */
export async function quietStats(upstream: Upstream): Promise<UpstreamStats> {
  let last = await upstream.stats();
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 300));
    const next = await upstream.stats();
    if (next.requests === last.requests && next.completionTokens === last.completionTokens) return next;
    last = next;
  }
  return last;
}

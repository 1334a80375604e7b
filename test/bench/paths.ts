/**
 * The paths beside chat (issue 50 item 3), `npm run bench -- --only=paths [--quick] [--rounds=N]
 * [--paths=requests|fanout] [--fanout-sockets=10000] [--fanout-turns=N] [--fanout-accounts=N]`: what svc adds over a direct call
 * on each path, with chat measured in the same run as the yardstick. Two svc instances share one database
 * and Redis; the request paths are measured on the first, the live-usage fan-out (fanout.ts) on both.
 *
 * Request paths, one connection each, requests one after another, in interleaved rounds (every path once per
 * round, in a rotating order) and the median of the round medians:
 *
 *   chat.direct      POST {upstream}/v1/chat/completions          the scripted upstream itself
 *   chat             POST /v1/chat/completions                    svc
 *   responses        POST /v1/responses                           svc, the same turn (chat upstream); direct: chat.direct
 *   search.direct    GET  {searxng}/search                         the scripted SearXNG
 *   search.rest      POST /v1/mcp/tools/call                      svc; direct: search.direct
 *   search.mcp       POST /v1/mcp (JSON-RPC tools/call)           svc; direct: search.direct
 *   usage            GET  /api/membership/usage (API key)         svc; direct: chat.direct, a bare loopback round trip
 *   staff            POST /graphql staffSearch (staff session)    svc; direct: chat.direct, a bare loopback round trip
 *
 * Membership REST and the staff query have no upstream: their "direct call" is a bare HTTP round trip of the
 * same size, so their added time holds the PostgreSQL and Redis reads they make (their targets allow for them).
 * Besides latency, svc's CPU per request on each path (its process's CPU time over the calls) says where the
 * cost is without the machine's load in it.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { median, pathTargets, printTargets, type Target } from './report.ts';
import { percentile, plainBody, plainResponsesBody, type Metrics } from './scenarios.ts';
import { searchCalls, sequentialCalls, type Call } from './search.ts';
import { createMember, signIn, startSvcGroup, type SvcGroup, type SvcOptions } from './svc.ts';
import { sampleProc } from './procs.ts';
import type { Upstream } from './systems.ts';
import { fanOut, type FanOutParams } from './fanout.ts';

export interface PathsParams {
  rounds: number;
  count: number;
  warmup: number;
  fanout: FanOutParams;
}

export const pathsParams: Record<'full' | 'quick', PathsParams> = {
  full: { rounds: 5, count: 1000, warmup: 100, fanout: { sockets: 10_000, turns: 20 } },
  quick: { rounds: 2, count: 200, warmup: 50, fanout: { sockets: 10_000, turns: 5 } },
};

/** The request paths, and which measured path is each one's direct call. */
export const PATHS = {
  'chat.direct': null,
  chat: 'chat.direct',
  responses: 'chat.direct',
  'search.direct': null,
  'search.rest': 'search.direct',
  'search.mcp': 'search.direct',
  usage: 'chat.direct',
  staff: 'chat.direct',
} as const;
export type PathName = keyof typeof PATHS;

/** Live subscriptions and sockets the fan-out opens from the one load-generator address. */
const FANOUT_LIMITS = { maxWebSocketsPerIp: 100_000, maxSubscriptionsPerAccount: 100_000 };
/** The members the fan-out spreads its sockets over sign in from that one address too (`--fanout-accounts`). */
const FANOUT_SIGN_INS = { throttle: { signInPerMinutePerIp: 100_000 } };

const STAFF_SEARCH = 'query Search($query: String!) { staffSearch(query: $query) { shape truncated hits { kind id matched account { email } } } }';

export interface PathsOptions {
  params: PathsParams;
  which: 'all' | 'requests' | 'fanout';
  upstream: Upstream;
  searchUrl: string;
  logOf: (name: string) => string;
  svc: SvcOptions;
  outFile: string;
  say: (text: string) => void;
}

export async function runPaths(options: PathsOptions): Promise<boolean> {
  const { params, say } = options;
  const group = await startSvcGroup(options.upstream, 2, (i) => options.logOf(`svc-paths-${i + 1}`), {
    ...options.svc,
    searchUrl: options.searchUrl,
    config: { server: FANOUT_LIMITS, auth: FANOUT_SIGN_INS },
  });
  try {
    say(`bench: paths on svc ${group.instances.map((i) => `pid ${i.pid}`).join(', ')}`);
    let summary: Metrics = {};
    if (options.which !== 'fanout') {
      const calls = await pathCalls(group, options.upstream.origin, options.searchUrl);
      summary = await measureRequests(calls, group.instances[0]!.pid, params, say);
    }
    if (options.which !== 'requests') {
      Object.assign(summary, await fanOut(group, params.fanout, say));
    }
    const list = pathTargets(summary);
    say('');
    say(printPaths(summary));
    say('');
    if (list.length) say(printTargets(list));
    writeFileSync(options.outFile, JSON.stringify({ mode: 'paths', params, summary, targets: list }, null, 2));
    say(`bench: wrote ${options.outFile}`);
    return list.every((t: Target) => t.met);
  } finally {
    await group.stop();
  }
}

/** Every request path's call, against the first instance (and a staff account to search with). */
async function pathCalls(group: SvcGroup, upstreamOrigin: string, searchUrl: string): Promise<Record<PathName, Call>> {
  const origin = group.instances[0]!.origin;
  const email = `bench-staff-${randomBytes(4).toString('hex')}@example.com`;
  const password = `bench-${randomBytes(12).toString('hex')}`;
  await createMember(group.databaseUrl, email, password, 'support');
  const cookie = await signIn(origin, email, password);
  const search = searchCalls({ origin, headers: group.headers }, searchUrl);
  const json = { 'content-type': 'application/json' };
  const ok200 = (status: number) => status === 200;
  return {
    'chat.direct': { origin: upstreamOrigin, method: 'POST', path: '/v1/chat/completions', headers: json, body: plainBody, ok: ok200 },
    chat: { origin, method: 'POST', path: '/v1/chat/completions', headers: group.headers, body: plainBody, ok: ok200 },
    responses: { origin, method: 'POST', path: '/v1/responses', headers: group.headers, body: plainResponsesBody, ok: (status, body) => status === 200 && body.includes('"status":"completed"') },
    'search.direct': search.direct,
    'search.rest': search.rest,
    'search.mcp': search.mcp,
    usage: { origin, method: 'GET', path: '/api/membership/usage', headers: { authorization: group.headers.authorization! }, ok: (status, body) => status === 200 && body.includes('"pools"') },
    staff: {
      origin,
      method: 'POST',
      path: '/graphql',
      headers: { ...json, origin, cookie },
      // The bench's own accounts: an email prefix, the staff box's commonest shape.
      body: JSON.stringify({ query: STAFF_SEARCH, variables: { query: 'bench-' } }),
      ok: (status, body) => status === 200 && body.includes('"hits":[{') && !body.includes('"errors"'),
    },
  };
}

/** Interleaved rounds over the request paths; per path the median of the rounds' p50, p99, failures and svc CPU per call. */
async function measureRequests(calls: Record<PathName, Call>, svcPid: number, params: PathsParams, say: (text: string) => void): Promise<Metrics> {
  const names = Object.keys(calls) as PathName[];
  const rounds: Metrics[] = [];
  for (let round = 0; round < params.rounds; round++) {
    const metrics: Metrics = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!;
      const before = await sampleProc(svcPid);
      const { latenciesUs, failures } = await sequentialCalls(calls[name], params.count, params.warmup);
      const after = await sampleProc(svcPid);
      metrics[`paths.${name}.p50Us`] = percentile(latenciesUs, 50);
      metrics[`paths.${name}.p99Us`] = percentile(latenciesUs, 99);
      metrics[`paths.${name}.failures`] = failures;
      // Direct calls do not reach svc: its CPU over them is its idle cost, the floor of the others'.
      metrics[`paths.${name}.svcCpuUsPerCall`] = ((after.cpuMs - before.cpuMs) * 1000) / (params.count + params.warmup);
      say(`round ${round + 1}/${params.rounds} ${name.padEnd(13)} p50 ${(metrics[`paths.${name}.p50Us`]! / 1000).toFixed(3)} ms, svc CPU ${(metrics[`paths.${name}.svcCpuUsPerCall`]! / 1000).toFixed(3)} ms/call, failures ${failures}`);
    }
    rounds.push(metrics);
  }
  const summary: Metrics = {};
  for (const key of Object.keys(rounds[0]!)) summary[key] = median(rounds.map((m) => m[key]!));
  return { ...summary, ...addedOverDirect(summary) };
}

/** `paths.<name>.addedP50Us`: each svc path's p50 minus its direct call's, from the same run. */
export function addedOverDirect(summary: Metrics): Metrics {
  const out: Metrics = {};
  for (const [name, direct] of Object.entries(PATHS)) {
    if (direct === null) continue;
    const own = summary[`paths.${name}.p50Us`];
    const base = summary[`paths.${direct}.p50Us`];
    if (own !== undefined && base !== undefined) out[`paths.${name}.addedP50Us`] = own - base;
  }
  return out;
}

function printPaths(summary: Metrics): string {
  const ms = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? '—' : (value / 1000).toFixed(3));
  const lines: string[] = [];
  if (summary['paths.chat.p50Us'] !== undefined) {
    lines.push('path           p50 ms   p99 ms   added p50 ms  svc CPU ms/call  failures');
    for (const name of Object.keys(PATHS)) {
      const at = (key: string) => summary[`paths.${name}.${key}`];
      lines.push(
        `${name.padEnd(13)}  ${ms(at('p50Us')).padStart(6)}  ${ms(at('p99Us')).padStart(7)}  ${ms(at('addedP50Us')).padStart(12)}  ${ms(at('svcCpuUsPerCall')).padStart(15)}  ${String(at('failures') ?? '—').padStart(8)}`,
      );
    }
  }
  if (summary['fanout.sockets'] !== undefined) {
    lines.push(
      `live-usage fan-out: ${summary['fanout.sockets']} sockets (${summary['fanout.subscribed']} subscribed) of ${summary['fanout.accounts'] ?? 1} member(s) over 2 instances, ${summary['fanout.turns']} turns of one member (${summary['fanout.turningSockets'] ?? summary['fanout.subscribed']} sockets);` +
        ` delivery p50 ${ms(summary['fanout.deliveryP50Us'])} ms, p95 ${ms(summary['fanout.deliveryP95Us'])} ms, p99 ${ms(summary['fanout.deliveryP99Us'])} ms;` +
        ` missed ${summary['fanout.missed']}, stale ${summary['fanout.stale']}, turns refused ${summary['fanout.turnsFailed']}; RSS ${(summary['fanout.rssKbPerSocket'] ?? NaN).toFixed(1)} KB per open socket` +
        ` (${(summary['fanout.rssMbBefore'] ?? NaN).toFixed(0)} → ${(summary['fanout.rssMbOpen'] ?? NaN).toFixed(0)} MB, both instances);` +
        ` svc CPU ${(summary['fanout.svcCpuMsPerTurn'] ?? NaN).toFixed(0)} ms and ${(summary['fanout.accountReadsPerTurn'] ?? NaN).toFixed(0)} account reads per turn;` +
        ` ${(summary['fanout.framesPerTurn'] ?? NaN).toFixed(0)} frames per turn, svc CPU ${(summary['fanout.svcCpuUsPerFrame'] ?? NaN).toFixed(1)} µs a frame;` +
        ` first arrival p50 ${ms(summary['fanout.firstP50Us'])} ms; load generator CPU ${(summary['fanout.loadCpuMsPerTurn'] ?? NaN).toFixed(0)} ms per turn`,
    );
  }
  return lines.join('\n');
}

/**
 * The search scenario: what svc adds to a search over calling the search backend directly. One
 * connection each, requests one after another (after untimed warm-up ones), the same query every time;
 * svc's short cache is off in the bench config, so every call reaches the backend:
 *
 *   direct  GET {searxng}/search?q=…&format=json            the scripted SearXNG itself (the baseline)
 *   rest    POST /v1/mcp/tools/call {name, arguments}       svc: auth, admission, search, normalise, settle
 *   mcp     POST /v1/mcp  (JSON-RPC tools/call, stateless)  the same turn through the official MCP SDK server
 *
 * Runs after the chat scenarios' ledger check (search turns have ledger rows but no chat upstream request).
 */
import { Client } from 'undici';
import type { Metrics } from './scenarios.ts';
import { percentile } from './scenarios.ts';

const now = () => process.hrtime.bigint();
const us = (from: bigint, to: bigint) => Number(to - from) / 1000;

export interface Call {
  origin: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Whether the answer is the success this call expects (a 200 is not enough: MCP errors are 200s). */
  ok(status: number, body: string): boolean;
}

/** `count` calls one after another on one keep-alive connection, after `warmup` untimed ones. */
export async function sequentialCalls(call: Call, count: number, warmup: number): Promise<{ latenciesUs: number[]; failures: number }> {
  const client = new Client(call.origin, { keepAliveTimeout: 60_000, pipelining: 1 });
  const latenciesUs: number[] = [];
  let failures = 0;
  try {
    for (let i = 0; i < warmup + count; i++) {
      const start = now();
      const res = await client.request({ method: call.method, path: call.path, headers: call.headers, body: call.body });
      const text = await res.body.text();
      const end = now();
      if (!call.ok(res.statusCode, text)) failures++;
      if (i >= warmup) latenciesUs.push(us(start, end));
    }
  } finally {
    await client.close();
  }
  return { latenciesUs, failures };
}

/** The three ways of searching the scenario compares (also measured by paths.ts). */
export function searchCalls(svc: { origin: string; headers: Record<string, string> }, searxngUrl: string): Record<'direct' | 'rest' | 'mcp', Call> {
  const query = 'reserving quota before a request';
  return {
    direct: {
      origin: searxngUrl,
      method: 'GET',
      path: `/search?${new URLSearchParams({ q: query, format: 'json' })}`,
      headers: { accept: 'application/json' },
      ok: (status) => status === 200,
    },
    rest: {
      origin: svc.origin,
      method: 'POST',
      path: '/v1/mcp/tools/call',
      headers: svc.headers,
      body: JSON.stringify({ name: 'web_search', arguments: { query } }),
      ok: (status, body) => status === 200 && body.startsWith('{"ok":true'),
    },
    mcp: {
      origin: svc.origin,
      method: 'POST',
      path: '/v1/mcp',
      headers: { ...svc.headers, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'web_search', arguments: { query } } }),
      ok: (status, body) => status === 200 && body.includes('"structuredContent"') && !body.includes('"isError":true'),
    },
  };
}

export async function searchScenario(svc: { origin: string; headers: Record<string, string> }, searxngUrl: string, count: number, warmup: number): Promise<Metrics> {
  const metrics: Metrics = {};
  for (const [name, call] of Object.entries(searchCalls(svc, searxngUrl))) {
    const { latenciesUs, failures } = await sequentialCalls(call, count, warmup);
    metrics[`search.${name}.p50Us`] = percentile(latenciesUs, 50);
    metrics[`search.${name}.p99Us`] = percentile(latenciesUs, 99);
    metrics[`search.${name}.failures`] = failures;
  }
  const direct = metrics['search.direct.p50Us']!;
  for (const name of ['rest', 'mcp']) {
    metrics[`search.${name}.addedP50Us`] = metrics[`search.${name}.p50Us`]! - direct;
    metrics[`search.${name}.ratioP50`] = metrics[`search.${name}.p50Us`]! / direct;
  }
  return metrics;
}

/** The scenario's lines for the report. */
export function printSearch(metrics: Metrics): string {
  const ms = (value: number | undefined) => (value === undefined ? '—' : `${(value / 1000).toFixed(3)} ms`);
  const lines = ['search (p50 / p99, one connection, sequential; svc cache off):'];
  for (const name of ['direct', 'rest', 'mcp']) {
    const added = name === 'direct' ? '' : `  added p50 ${ms(metrics[`search.${name}.addedP50Us`])}, ${metrics[`search.${name}.ratioP50`]!.toFixed(2)}× direct`;
    lines.push(`  ${name.padEnd(7)} ${ms(metrics[`search.${name}.p50Us`])} / ${ms(metrics[`search.${name}.p99Us`])}  failures ${metrics[`search.${name}.failures`]}${added}`);
  }
  return lines.join('\n');
}

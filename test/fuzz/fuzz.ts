/**
 * A seeded, bounded HTTP fuzzer for svc (issue 15): generated requests across every registered route
 * (`registeredRoutes(app)`, the same table the 404/405 answer uses) and every GraphQL query and mutation of
 * the committed `schema.graphql` with wrongly typed variables, spread over several instances. It counts
 * what must never happen: a 5xx (or a GraphQL `internal_error`, a 500 in disguise), an answer slower than
 * `hangMs`, a dropped connection, and a 4xx whose body is not the spec's error envelope (RFC-shaped bodies
 * on `/oauth`, GraphQL `errors` on `/graphql`, JSON-RPC errors on `/v1/mcp`). The same seed gives the same
 * requests.
 *
 * Used by `npm run fuzz` (test/fuzz/run.ts) and the CI slice (test/security/fuzz.test.ts).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import type { RegisteredRoute } from '../../server/http/route-table.ts';

export interface FuzzCredentials {
  /** An `svc_live_` key of a member with room in its pools. */
  key: string;
  /** The same member's web session cookie value (`svc_membership_session`). */
  cookie: string;
}

export interface FuzzTarget {
  /** Base URLs of the instances (requests take turns). */
  urls: string[];
  routes: RegisteredRoute[];
  credentials: FuzzCredentials;
  /** Fresh credentials (the fuzz signs its session out now and then); called every 250 requests when given. */
  refresh?(): Promise<FuzzCredentials>;
  schema?: GraphQLSchema;
}

export interface FuzzOptions {
  seed: number;
  count: number;
  /** Requests in flight at once (default 16). */
  concurrency?: number;
  /** An answer (headers and body) slower than this is a hang (default 5,000 ms). */
  hangMs?: number;
  /** Called every `progressEvery` requests. */
  onProgress?(done: number): void;
}

export type FindingKind = '5xx' | 'hang' | 'envelope' | 'dropped' | 'graphql-internal';

export interface Finding {
  kind: FindingKind;
  route: string;
  status: number | null;
  request: { method: string; path: string; headers: Record<string, string>; body: string | null };
  answer: string;
}

export interface RouteStats {
  count: number;
  s2xx: number;
  s3xx: number;
  s4xx: number;
  s5xx: number;
  hangs: number;
  dropped: number;
  badEnvelope: number;
  maxMs: number;
}

export interface FuzzReport {
  seed: number;
  total: number;
  ms: number;
  byRoute: Map<string, RouteStats>;
  findings: Finding[];
  /** Findings by kind. */
  counts: Record<FindingKind, number>;
}

/** The committed GraphQL contract. */
export function loadSchema(): GraphQLSchema {
  return buildSchema(readFileSync(resolve(import.meta.dirname, '../../schema.graphql'), 'utf8'));
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Generated {
  route: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | null;
}

/** Field names the routes read; values of every type go into them. */
const fieldNames = [
  'email', 'password', 'code', 'name', 'device_code', 'user_code', 'grant_type', 'client_id', 'client_name', 'scope', 'model', 'messages',
  'input', 'prompt', 'max_tokens', 'max_output_tokens', 'max_completion_tokens', 'stream', 'temperature', 'top_p', 'n', 'stop', 'seed', 'tools', 'tool_choice',
  'response_format', 'stream_options', 'user', 'reason', 'role', 'package', 'until', 'voice', 'speed', 'format', 'duration', 'size', 'quality',
  'instructions', 'previous_response_id', 'enable_thinking', 'reasoning_effort', 'chat_template_kwargs', 'logprobs', 'suffix', 'echo', 'locale',
];

const queryNames = ['limit', 'cursor', 'before', 'after', 'from', 'to', 'q', 'query', 'returnTo', 'state', 'code', 'page', 'pageSize', 'first', 'model', 'status', 'role', 'accountId', 'action'];

const strings = [
  '', ' ', 'a', 'x'.repeat(300), 'x'.repeat(70_000), '\u0000', 'a\u0000b@example.com', '%00', '../../etc/passwd', '<script>alert(1)</script>', "' or 1=1 --",
  '😀'.repeat(50), '\ud800', 'null', 'true', '-1', '1e309', 'NaN', 'svc-2.1-fast', 'auto', 'svc-2.1-search', 'svc-img', 'svc-tts', 'user', 'system', 'assistant',
  'tool', 'pro', 'max_x20', 'admin', 'member', 'free', 'fuzz@example.com', 'not-an-email', 'BCDF-GHJK', '123456', 'correct horse battery staple',
  'urn:ietf:params:oauth:grant-type:device_code', 'svc_live_' + 'A'.repeat(43), 'mbr_' + '0'.repeat(26), '2026-01-01T00:00:00Z', '9999-12-31', '-292277026596-12-04',
  'zh-CN', 'en', 'mp3', 'wav', 'json_object', 'day', 'week', 'month', '%E0%A4%A', 'aGVsbG8=', '{"a":1}', '\r\nX-Injected: 1',
];

const numbers = [0, -1, 1, 2, 8, 255, 1024, 8193, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 0.5, -0.0001, 3.14159, 1e-320];

/** Stand-ins for the credentials in generated requests, filled in when sent (they are refreshed). */
const keyMark = '{{key}}';
const cookieMark = '{{cookie}}';

export function fuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const random = prng(options.seed);
  let credentials = target.credentials;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chance = (p: number) => random() < p;
  const routes = target.routes.filter((route) => !route.url.startsWith('/assets/'));
  const schema = target.schema ?? loadSchema();
  const operations = graphqlOperations(schema);

  function value(depth = 0): unknown {
    const r = random();
    if (r < 0.3) return pick(strings);
    if (r < 0.5) return pick(numbers);
    if (r < 0.58) return chance(0.5);
    if (r < 0.65) return null;
    if (depth > 2) return pick(strings);
    if (r < 0.8) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    if (r < 0.97) return object(depth + 1);
    return deep(chance(0.5) ? 5_000 : 60);
  }

  function object(depth = 0): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const fields = Math.floor(random() * 5);
    for (let i = 0; i < fields; i++) out[chance(0.9) ? pick(fieldNames) : pick(strings).slice(0, 40)] = value(depth);
    return out;
  }

  /** A placeholder that `json()` turns into `levels` nested arrays or objects (too deep for JSON.stringify). */
  function deep(levels: number): unknown {
    return `\u0001deep:${levels}:${chance(0.5) ? 'a' : 'o'}\u0001`;
  }

  function json(input: unknown): string {
    return JSON.stringify(input).replace(/"\\u0001deep:(\d+):([ao])\\u0001"/g, (_m, levels: string, kind: string) => {
      const n = Number(levels);
      return kind === 'a' ? `${'['.repeat(n)}"bottom"${']'.repeat(n)}` : `${'{"a":'.repeat(n)}"bottom"${'}'.repeat(n)}`;
    });
  }

  /** A request a well-behaved client might send to this route, with one part spoiled, so the fuzz gets past the first check. */
  function plausible(url: string): Record<string, unknown> {
    const chat = { model: pick(['svc-2.1-fast', 'auto', 'svc-2.1-search']), messages: [{ role: 'user', content: 'hello' }], max_tokens: 8, stream: chance(0.5) };
    const base: Record<string, unknown> = url.endsWith('/chat/completions')
      ? chat
      : url.endsWith('/responses')
        ? { model: 'svc-2.1-fast', input: 'hello', max_output_tokens: 8, stream: chance(0.5) }
        : url.endsWith('/completions')
          ? { model: 'svc-2.1-fast', prompt: 'hello', max_tokens: 8 }
          : url.endsWith('/audio/speech')
            ? { model: 'svc-tts', input: 'hello', voice: 'alloy' }
            : url.includes('/auth/')
              ? { email: `fuzz-${Math.floor(random() * 1e9)}@example.com`, password: 'lantern orbit pickle saga', code: '123456', name: 'fuzz', device_code: 'x', grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }
              : { reason: 'fuzz', package: 'pro', role: 'member' };
    const spoiled = pick(Object.keys(base));
    if (chance(0.6)) base[spoiled] = value();
    if (chance(0.3)) base[pick(fieldNames)] = value();
    if (url.endsWith('/chat/completions') && chance(0.3)) {
      base.messages = chance(0.5) ? [{ role: pick(strings), content: value() }] : value();
    }
    return base;
  }

  function pathFor(url: string): string {
    let path = url.replace(/:[A-Za-z_]+/g, () => encodeURIComponent(pick([...strings.slice(0, 20), '00000000-0000-0000-0000-000000000000', 'abc', '1']).toWellFormed()));
    path = path.replace(/\*$/, () => (chance(0.5) ? pick(['x.png', 'a/b/c', '..%2f..%2fetc', encodeURIComponent(pick(strings).slice(0, 200).toWellFormed())]) : ''));
    if (chance(0.35)) {
      const params = new URLSearchParams();
      const n = 1 + Math.floor(random() * 3);
      for (let i = 0; i < n; i++) params.append(pick(queryNames), String(pick([...strings.slice(0, 30), ...numbers.map(String)])).slice(0, 2000));
      path += `?${params.toString()}`;
    }
    return path;
  }

  function headersFor(base: string, path = ''): Record<string, string> {
    const headers: Record<string, string> = {};
    // The API (/v1) mostly with the key, so the fuzz gets past authentication to what is behind it.
    const auth = path.startsWith('/v1/') && chance(0.5) ? 0 : random();
    if (auth < 0.3) headers.authorization = `Bearer ${keyMark}`;
    else if (auth < 0.55) {
      headers.cookie = `svc_membership_session=${cookieMark}`;
      if (chance(0.85)) headers.origin = base;
    } else if (auth < 0.62) headers.authorization = pick(['Bearer ', 'Bearer svc_live_nope', 'Basic Zm9vOmJhcg==', `Bearer ${'x'.repeat(5000)}`, 'Bearer svc_sess_x']);
    else if (auth < 0.66) headers.cookie = pick(['svc_membership_session=', 'svc_membership_session=svc_sess_nope', 'a=b; svc_membership_session=%00']);
    if (chance(0.1)) headers['x-svc-request-id'] = pick(['mbr_' + '0'.repeat(26), 'x'.repeat(300), 'mbr_../../', '\u00e9']);
    if (chance(0.05)) headers['accept-language'] = pick(['zh-CN', 'en', '*', 'xx;q=abc']);
    if (chance(0.03)) headers['x-forwarded-for'] = pick(['1.2.3.4', 'not-an-ip', '::1']);
    return headers;
  }

  function restRequest(route: RegisteredRoute, base: string): Generated {
    const method = chance(0.05) ? pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) : route.method;
    const headers = headersFor(base, route.url);
    let body: string | null = null;
    if (method !== 'GET' && method !== 'DELETE' && method !== 'HEAD') {
      const r = random();
      if (r < 0.5) body = json(plausible(route.url));
      else if (r < 0.7) body = json(object());
      else if (r < 0.78) body = json(value());
      else if (r < 0.86) body = pick(['{', '{"email":', 'null', '[]', '"x"', '{"a":1}}', '\u0000', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}']);
      else if (r < 0.9) body = `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
      else if (r < 0.92) body = JSON.stringify({ input: 'x'.repeat(1_200_000) });
      if (body !== null) headers['content-type'] = chance(0.9) ? 'application/json' : pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/xml']);
    }
    return { route: `${route.method} ${route.url}`, method, path: pathFor(route.url), headers, body };
  }

  function graphqlRequest(base: string): Generated {
    const headers = headersFor(base);
    headers['content-type'] = 'application/json';
    const operation = pick(operations);
    const variables: Record<string, unknown> = {};
    for (const argument of operation.args) {
      if (chance(0.1)) continue; // a required variable left out
      variables[argument.name] = chance(0.6) ? wrongValue(argument.type) : rightValue(argument.type);
    }
    if (chance(0.1)) variables[pick(fieldNames)] = value();
    let query = operation.document;
    const r = random();
    if (r < 0.04) query = query.slice(0, Math.floor(random() * query.length));
    else if (r < 0.07) query = query.replace(operation.field, `${operation.field}Nope`);
    const payload = chance(0.05) ? value() : { query, variables: chance(0.05) ? value() : variables, ...(chance(0.05) ? { operationName: pick(strings) } : {}) };
    if (chance(0.05)) {
      const params = new URLSearchParams({ query, variables: json(variables) });
      return { route: `GraphQL ${operation.kind} ${operation.field}`, method: 'GET', path: `/graphql?${params.toString()}`, headers, body: null };
    }
    return { route: `GraphQL ${operation.kind} ${operation.field}`, method: 'POST', path: '/graphql', headers, body: json(payload) };
  }

  function wrongValue(type: GraphQLInputType): unknown {
    const named = getNamedType(type);
    if (isScalarType(named)) {
      if (named.name === 'Int' || named.name === 'Float') return pick(['12', 'x', true, { a: 1 }, [1], 2 ** 53, 1e308, 3.5, null]);
      if (named.name === 'Boolean') return pick(['true', 1, 'x', {}, null]);
      return pick([1, true, { a: 1 }, [pick(strings)], null, 1e308, -1, 'x'.repeat(70_000), '\u0000', pick(strings)]);
    }
    if (isEnumType(named)) return pick(['NOPE', 1, null, 'member', { a: 1 }]);
    return pick([1, 'x', [], null, { nope: 1 }, deep(200)]);
  }

  function rightValue(type: GraphQLInputType): unknown {
    if (isNonNullType(type)) return rightValue(type.ofType);
    if (isListType(type)) return [rightValue(type.ofType)];
    if (isEnumType(type)) return pick(type.getValues()).name;
    if (isInputObjectType(type)) return Object.fromEntries(Object.values(type.getFields()).map((field) => [field.name, rightValue(field.type)]));
    const named = getNamedType(type);
    if (named.name === 'Int') return pick([0, 1, 10, 100, -1]);
    if (named.name === 'Float') return pick([0, 1.5, -1]);
    if (named.name === 'Boolean') return chance(0.5);
    if (named.name === 'DateTime') return pick(['2026-01-01T00:00:00Z', 'yesterday', '9999-12-31T00:00:00Z']);
    if (named.name === 'ID') return pick(['00000000-0000-0000-0000-000000000000', 'x', '1']);
    return pick(strings.slice(0, 40));
  }

  const stats = new Map<string, RouteStats>();
  const findings: Finding[] = [];
  const counts: Record<FindingKind, number> = { '5xx': 0, hang: 0, envelope: 0, dropped: 0, 'graphql-internal': 0 };
  const hangMs = options.hangMs ?? 5_000;
  const record = (kind: FindingKind, request: Generated, status: number | null, answer: string) => {
    counts[kind] += 1;
    if (findings.length < 200) findings.push({ kind, route: request.route, status, request: { method: request.method, path: request.path.slice(0, 300), headers: request.headers, body: request.body?.slice(0, 500) ?? null }, answer: answer.slice(0, 500) });
  };

  // Generated up front, in order, so the sequence depends on the seed alone and not on answer timing.
  const requests: Generated[] = [];
  for (let i = 0; i < options.count; i++) {
    const base = target.urls[i % target.urls.length]!;
    const generated = chance(0.25) ? graphqlRequest(base) : restRequest(pick(routes), base);
    requests.push(generated);
  }

  async function send(index: number): Promise<void> {
    const request = requests[index]!;
    const base = target.urls[index % target.urls.length]!;
    const entry = stats.get(request.route) ?? { count: 0, s2xx: 0, s3xx: 0, s4xx: 0, s5xx: 0, hangs: 0, dropped: 0, badEnvelope: 0, maxMs: 0 };
    stats.set(request.route, entry);
    entry.count += 1;
    const started = performance.now();
    const signal = AbortSignal.timeout(hangMs);
    let status: number | null = null;
    try {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, value.replace(keyMark, credentials.key).replace(cookieMark, credentials.cookie)]));
      const response = await fetch(`${base}${request.path}`, { method: request.method, headers, body: request.body, redirect: 'manual', signal });
      status = response.status;
      const text = await response.text();
      entry.maxMs = Math.max(entry.maxMs, performance.now() - started);
      if (status >= 500) {
        entry.s5xx += 1;
        record('5xx', request, status, text);
      } else if (status >= 400) {
        entry.s4xx += 1;
        if (!isEnvelope(request.path, text)) {
          entry.badEnvelope += 1;
          record('envelope', request, status, text);
        }
      } else if (status >= 300) entry.s3xx += 1;
      else entry.s2xx += 1;
      if (request.path.startsWith('/graphql') && text.includes('"internal_error"')) record('graphql-internal', request, status, text);
    } catch (error) {
      entry.maxMs = Math.max(entry.maxMs, performance.now() - started);
      if (signal.aborted) {
        entry.hangs += 1;
        record('hang', request, status, `no complete answer within ${hangMs} ms`);
      } else {
        entry.dropped += 1;
        record('dropped', request, status, String((error as Error).cause ?? error));
      }
    }
  }

  const started = performance.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < requests.length) {
      const index = next++;
      await send(index);
      done += 1;
      if (done % 1000 === 0) options.onProgress?.(done);
      if (done % 250 === 0 && target.refresh) credentials = await target.refresh();
    }
  };
  return Promise.all(Array.from({ length: options.concurrency ?? 16 }, worker)).then(() => ({
    seed: options.seed,
    total: requests.length,
    ms: performance.now() - started,
    byRoute: stats,
    findings,
    counts,
  }));
}

interface Operation {
  kind: 'query' | 'mutation';
  field: string;
  document: string;
  args: { name: string; type: GraphQLInputType }[];
}

/** One operation per Query and Mutation field, every argument a variable of its declared type. */
export function graphqlOperations(schema: GraphQLSchema): Operation[] {
  const out: Operation[] = [];
  for (const [kind, root] of [['query', schema.getQueryType()], ['mutation', schema.getMutationType()]] as const) {
    if (!root) continue;
    for (const field of Object.values(root.getFields())) {
      const declared = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
      const passed = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
      const document = `${kind} Fuzz${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selection(field, 0)} }`;
      out.push({ kind, field: field.name, document, args: field.args.map((arg) => ({ name: arg.name, type: arg.type })) });
    }
  }
  return out;
}

function selection(field: GraphQLField<unknown, unknown>, depth: number): string {
  const type = getNamedType(field.type);
  if (!isObjectType(type)) return isScalarType(type) || isEnumType(type) ? '' : ' { __typename }';
  const leaves = Object.values((type as GraphQLObjectType).getFields()).filter((f) => f.args.length === 0);
  const parts = leaves
    .filter((f) => depth < 1 || isScalarType(getNamedType(f.type)) || isEnumType(getNamedType(f.type)))
    .slice(0, 8)
    .map((f) => `${f.name}${selection(f, depth + 1)}`);
  return ` { __typename ${parts.join(' ')} }`;
}

/** The spec's error envelope (DESIGN §5), or the RFC shape on /oauth, GraphQL errors on /graphql, JSON-RPC on /v1/mcp. */
export function isEnvelope(path: string, text: string): boolean {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return false;
  }
  // GraphQL answers in its own shape, or in the envelope when the request was refused before GraphQL ran.
  const errors = body.errors as { message?: unknown; extensions?: { code?: unknown } }[] | undefined;
  if (path.startsWith('/graphql') && Array.isArray(errors)) {
    return errors.length > 0 && errors.every((e) => typeof e.message === 'string' && typeof e.extensions?.code === 'string');
  }
  if (path.startsWith('/oauth/') && typeof body.error === 'string') return true;
  // The MCP endpoint speaks JSON-RPC (the MCP transport's own error shape), as /oauth speaks RFC 6749.
  const rpc = body.error as { code?: unknown; message?: unknown } | undefined;
  if (/^\/v1\/mcp(\?|$)/.test(path) && body.jsonrpc === '2.0' && typeof rpc?.code === 'number' && typeof rpc.message === 'string') return true;
  const error = body.error as Record<string, unknown> | undefined;
  // The Anthropic Messages API answers in Anthropic's error shape (what its clients parse); svc's code is in a header.
  if (/^\/v1\/messages(\/|\?|$)/.test(path)) return body.type === 'error' && typeof error?.type === 'string' && typeof error.message === 'string' && typeof body.request_id === 'string';
  return (
    body.ok === false &&
    typeof body.code === 'string' &&
    typeof body.message === 'string' &&
    typeof body.messageZh === 'string' &&
    typeof body.requestId === 'string' &&
    typeof error?.message === 'string' &&
    typeof error.type === 'string' &&
    typeof error.code === 'string'
  );
}

/** The summary table: one line per route, then the totals and the first findings. */
export function formatReport(report: FuzzReport): string {
  const rows = [...report.byRoute.entries()].sort(([a], [b]) => a.localeCompare(b));
  const width = Math.max(5, ...rows.map(([route]) => route.length));
  const head = `${'route'.padEnd(width)}  ${['n', '2xx', '3xx', '4xx', '5xx', 'hang', 'drop', 'bad4xx', 'max ms'].map((h) => h.padStart(6)).join(' ')}`;
  const lines = [head, '-'.repeat(head.length)];
  const total: RouteStats = { count: 0, s2xx: 0, s3xx: 0, s4xx: 0, s5xx: 0, hangs: 0, dropped: 0, badEnvelope: 0, maxMs: 0 };
  for (const [route, s] of rows) {
    lines.push(`${route.padEnd(width)}  ${[s.count, s.s2xx, s.s3xx, s.s4xx, s.s5xx, s.hangs, s.dropped, s.badEnvelope, Math.round(s.maxMs)].map((n) => String(n).padStart(6)).join(' ')}`);
    for (const key of Object.keys(total) as (keyof RouteStats)[]) total[key] = key === 'maxMs' ? Math.max(total.maxMs, s.maxMs) : total[key] + s[key];
  }
  lines.push('-'.repeat(head.length));
  lines.push(`${`total (${rows.length} routes and operations)`.padEnd(width)}  ${[total.count, total.s2xx, total.s3xx, total.s4xx, total.s5xx, total.hangs, total.dropped, total.badEnvelope, Math.round(total.maxMs)].map((n) => String(n).padStart(6)).join(' ')}`);
  lines.push('');
  lines.push(
    `seed ${report.seed}: ${report.total} requests in ${(report.ms / 1000).toFixed(1)} s — 5xx ${report.counts['5xx']}, hangs ${report.counts.hang}, dropped ${report.counts.dropped}, 4xx outside the envelope ${report.counts.envelope}, GraphQL internal_error ${report.counts['graphql-internal']}`,
  );
  for (const finding of report.findings.slice(0, 15)) {
    lines.push(`  ${finding.kind} ${finding.status ?? '-'} ${finding.route}: ${finding.request.method} ${finding.request.path.slice(0, 120)} ${finding.request.body?.slice(0, 160) ?? ''}`);
    lines.push(`      → ${finding.answer.slice(0, 240)}`);
  }
  return lines.join('\n');
}

/** Whether the fuzz found nothing that must not happen. */
export function clean(report: FuzzReport): boolean {
  return Object.values(report.counts).every((n) => n === 0);
}

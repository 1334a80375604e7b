/**
 * Summarises a V8 CPU profile (from `npm run bench -- --profile`): self time by function and by package,
 * and inclusive time of svc's own functions, so the hot path's cost can be named precisely.
 *
 *   node test/bench/profile-summary.ts <file.cpuprofile> [top=30] [--serving] [--requests=N] [--categories] [--callers=fn]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, ...rest] = process.argv.slice(2);
if (!file) throw new Error('usage: node test/bench/profile-summary.ts <file.cpuprofile> [top]');
// `top` is optional and may come after the flags: the first bare number.
const top = Number(rest.find((arg) => /^\d+$/.test(arg)) ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
// `--serving`: only the samples between the first and the last one inside the chat handler, which
// leaves out start-up (module loading, migrations) and shutdown.
const serving = process.argv.includes('--serving');
const inChat = (id: number) => {
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const frame = byId.get(cur)!.callFrame;
    if (frame.functionName === 'serve' && frame.url.endsWith('metering/pipeline.ts')) return true;
  }
  return false;
};
let first = 0;
let last = profile.samples.length - 1;
if (serving) {
  first = profile.samples.findIndex(inChat);
  while (last > first && !inChat(profile.samples[last]!)) last--;
}
const selfUs = new Map<number, number>();
for (let i = Math.max(0, first); i <= last; i++) {
  const id = profile.samples[i]!;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const where = (n: Node) => {
  const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/^.*\/work\/main\//, '');
  return `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
};
const pkg = (n: Node) => {
  const url = n.callFrame.url;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.includes('/server/')) return 'svc (server/)';
  if (url.startsWith('node:')) return 'node core (JS)';
  return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : 'native / other';
};

// `--requests=N`: also print microseconds per request.
const requests = Number(process.argv.find((a) => a.startsWith('--requests='))?.slice('--requests='.length) ?? 0);

function table(title: string, map: Map<string, number>): void {
  process.stdout.write(`\n${title}\n`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const perRequest = requests > 0 ? `${(us / requests).toFixed(1).padStart(7)} µs/req  ` : '';
    process.stdout.write(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${perRequest}${name}\n`);
  }
}

const selfByFn = new Map<string, number>();
const selfByPkg = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  selfByFn.set(where(n), (selfByFn.get(where(n)) ?? 0) + us);
  selfByPkg.set(pkg(n), (selfByPkg.get(pkg(n)) ?? 0) + us);
  // Inclusive time of server/ functions: every distinct server/ frame on the stack gets the sample.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const frame = byId.get(cur)!;
    if (!frame.callFrame.url.includes('/server/')) continue;
    const key = where(frame);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + us);
  }
}
process.stdout.write(`total sampled ${(total / 1000).toFixed(0)} ms\n`);
table('self time by package', selfByPkg);
table('self time by function', selfByFn);
table('inclusive time of svc (server/) functions', inclusive);

// `--callers=<name>`: who calls a function (its stacks, three frames up), by time.
const callersOf = process.argv.find((a) => a.startsWith('--callers='))?.slice('--callers='.length);
if (callersOf) {
  const stacks = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    if (n.callFrame.functionName !== callersOf) continue;
    const chain: string[] = [];
    for (let cur = parent.get(id); cur !== undefined && chain.length < 4; cur = parent.get(cur)) chain.push(where(byId.get(cur)!));
    const key = chain.join(' ← ');
    stacks.set(key, (stacks.get(key) ?? 0) + us);
  }
  table(`callers of ${callersOf}`, stacks);
}

// `--categories`: each sample goes to the first category (in this order) found anywhere on its stack, so
// e.g. a Redis call made by settlement counts as settlement. Answers "what does one request cost, by step".
if (process.argv.includes('--categories')) {
  const rules: [string, RegExp][] = [
    ['logging (pino, sync writes)', /node_modules\/(pino|sonic-boom|@pinojs|pino-std-serializers)\/|server\/log\.ts/],
    ['metrics (prom-client onResponse)', /node_modules\/prom-client\/|server\/http\/metrics\.ts/],
    ['request id (randomBytes)', /server\/http\/request-id\.ts/],
    ['settle (Redis settle + ledger insert)', /server\/metering\/(settlement|ledger)\.ts|\bsettle\b.*pool\.(redis|leasing)-store/],
    ['authenticate (key hash + cache)', /server\/modules\/(identity|session|api-key)\//],
    ['admit (rate limits + reservation: lease or Redis Lua)', /server\/metering\/(admission|pool\.redis-store|pool\.leasing-store|pool\.notifying-store)\.ts|node_modules\/(ioredis|redis-parser|@ioredis)\//],
    ['validate + route', /chat\.validate\.ts|chat\.surface\.ts|model\.registry\.ts/],
    ['stream rewrite', /stream-rewriter\.ts/],
    ['upstream call (undici)', /node_modules\/undici\//],
    ['proxy (JSON reply, rewrite, send)', /chat\.executor\.ts|json-reply\.ts|framing\.ts|server\/metering\/(pipeline|turn)\.ts|model\/dispatch\.ts/],
    ['fastify (routing, hooks, body parse, reply)', /node_modules\/(fastify|find-my-way|secure-json-parse|avvio|light-my-request|@fastify)\//],
    ['ORM / pg (other)', /node_modules\/(@mikro-orm|pg|pg-protocol|pg-pool|kysely)\//],
  ];
  const totals = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const leaf = byId.get(id)!;
    let category: string | undefined;
    if (leaf.callFrame.functionName === '(idle)') category = '(idle)';
    else if (leaf.callFrame.functionName === '(garbage collector)') category = 'garbage collector';
    else {
      const stack: string[] = [];
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const f = byId.get(cur)!.callFrame;
        stack.push(`${f.url}:${f.lineNumber + 1} ${f.functionName}`);
      }
      const joined = stack.join('\n');
      category = rules.find(([, re]) => re.test(joined))?.[0] ?? (/node:(_http|net|internal\/stream)/.test(joined) ? 'node http/net core' : 'other (startup, timers, native)');
    }
    totals.set(category, (totals.get(category) ?? 0) + us);
  }
  table('time by step (first matching category on the stack)', totals);
}

/**
 * Preloaded into a system under test by `tail.ts` (`node --import …/tail-probe.ts`, `SVC_TAIL_PROBE=<file>`):
 * records, with wall-clock timestamps, what can hold a request up inside the process, and writes it to the
 * file as JSON lines every 200 ms. The server knows nothing of it: no route, no code in server/.
 *
 *   {"k":"gc","t":…,"d":1.2,"kind":1}     a GC pause (kind: 1 scavenge, 2 minor mark-sweep, 4 mark-compact, 8 weak callbacks)
 *   {"k":"stall","t":…,"d":12.5}           the event loop late by d ms (a 5 ms timer that ran late)
 *   {"k":"req","t":…,"d":201.3}            one HTTP request, from its request event to its response's finish
 *   {"k":"pg","t":…,"d":3.1,"q":"copy"}    in svc: a PostgreSQL statement (the ledger's COPY is a settlement round)
 *   {"k":"redis","t":…,"d":0.8,"c":"takeLease"}  in svc: a Redis command, named by the store method that sent it
 *
 * `t` is milliseconds since the epoch (`performance.timeOrigin` + `performance.now()`), comparable with the
 * load generator's to a millisecond or so.
 */
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { subscribe } from 'node:diagnostics_channel';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { resolve } from 'node:path';

const TICK_MS = 5;

function startProbe(file: string): void {
  const lines: string[] = [];
  const at = (ms: number) => Math.round((performance.timeOrigin + ms) * 100) / 100;
  const round = (ms: number) => Math.round(ms * 100) / 100;
  const push = (record: object) => lines.push(JSON.stringify(record));

  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) push({ k: 'gc', t: at(entry.startTime), d: round(entry.duration), kind: (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind });
  }).observe({ entryTypes: ['gc'] });

  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last > 2 * TICK_MS) push({ k: 'stall', t: at(last), d: round(now - last - TICK_MS) });
    last = now;
  }, TICK_MS).unref();

  // Node's own channels for node:http servers: no listener on the request or response objects.
  const started = new WeakMap<object, number>();
  subscribe('http.server.request.start', (message) => started.set((message as { response: object }).response, performance.now()));
  subscribe('http.server.response.finish', (message) => {
    const t0 = started.get((message as { response: object }).response);
    if (t0 !== undefined) push({ k: 'req', t: at(t0), d: round(performance.now() - t0) });
  });

  if (process.argv[1]?.endsWith('server/main.ts')) {
    const root = resolve(import.meta.dirname, '../..');
    // svc's pg is the one MikroORM's driver brings; the top-level one too, in case they are the same.
    for (const from of [resolve(root, 'node_modules/@mikro-orm/postgresql/package.json'), resolve(root, 'package.json')]) timePg(createRequire(from)('pg'), push, at);
    timeRedis(createRequire(resolve(root, 'package.json'))('ioredis'), push, at);
  }

  setInterval(() => {
    if (lines.length === 0) return;
    appendFileSync(file, `${lines.join('\n')}\n`);
    lines.length = 0;
  }, 200).unref();
  process.on('exit', () => {
    if (lines.length > 0) appendFileSync(file, `${lines.join('\n')}\n`);
  });
}

type Push = (record: object) => void;
type At = (ms: number) => number;

/** Times each statement from `query` to its callback (queued behind another on the connection included). */
function timePg(pg: { Client: { prototype: { query: (...args: unknown[]) => unknown } } }, push: Push, at: At): void {
  const proto = pg.Client.prototype as { query: (...args: unknown[]) => unknown; __tailProbe?: boolean };
  if (proto.__tailProbe) return;
  proto.__tailProbe = true;
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const t0 = performance.now();
    const first = args[0] as { text?: string; callback?: unknown } | string;
    const text = typeof first === 'string' ? first : (first?.text ?? (first && 'submit' in first ? 'copy' : '?'));
    const q = text.trimStart().split(/\s/, 1)[0]!.toLowerCase();
    const last = args.length - 1;
    const done = () => push({ k: 'pg', t: at(t0), d: Math.round((performance.now() - t0) * 100) / 100, q });
    if (typeof args[last] === 'function') {
      const callback = args[last] as (...a: unknown[]) => unknown;
      args[last] = (...a: unknown[]) => {
        done();
        return callback(...a);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args);
    if (result instanceof Promise) result.then(done, done);
    return result;
  };
}

/** Times each command from `sendCommand` to its reply, named by the first svc store method on the stack. */
function timeRedis(ioredis: { Redis: { prototype: { sendCommand: (command: unknown) => unknown } } }, push: Push, at: At): void {
  const proto = ioredis.Redis.prototype as { sendCommand: (command: { name: string; promise?: Promise<unknown> }) => unknown };
  const send = proto.sendCommand;
  proto.sendCommand = function (this: unknown, command) {
    const t0 = performance.now();
    let c = command.name;
    if (c === 'evalsha' || c === 'eval') {
      const stack = new Error().stack ?? '';
      const match = /at (?:async )?(?:\w+\.)?#?(\w+) \([^)]*server\/metering\/pool\.(?:redis|leasing)-store\.ts/.exec(stack);
      if (match) c = match[1]!;
    }
    const result = send.call(this, command);
    const done = () => push({ k: 'redis', t: at(t0), d: Math.round((performance.now() - t0) * 100) / 100, c });
    command.promise?.then(done, done);
    return result;
  };
}

const file = process.env.SVC_TAIL_PROBE;
if (file) startProbe(file);

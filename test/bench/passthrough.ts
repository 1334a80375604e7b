/**
 * The bare passthrough: node:http in, undici Pool out, no features at all. It is the ceiling any Node
 * gateway can reach on this machine, so svc's numbers are read against it.
 *
 *   node test/bench/passthrough.ts <port> <upstream origin>
 *
 * `BENCH_BURN_CHUNK_US=N` makes it spin N µs of CPU per relayed chunk and nothing else: `burn.ts` asks
 * what a system's extra CPU per chunk alone does to the time to first token.
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.argv[2]);
const origin = process.argv[3]!;
// No connection cap (undici's default), so 1,000 concurrent streams are 1,000 upstream sockets.
const pool = new Pool(origin, { pipelining: 1, keepAliveTimeout: 60_000 });
const burnMs = Number(process.env.BENCH_BURN_CHUNK_US ?? 0) / 1000;
const burn = () => {
  const until = performance.now() + burnMs;
  while (performance.now() < until);
};

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    const ac = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    pool
      .request({
        method: req.method as 'POST',
        path: req.url!,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: Buffer.concat(parts),
        signal: ac.signal,
      })
      .then(({ statusCode, headers, body }) => {
        res.writeHead(statusCode, { 'content-type': headers['content-type'] as string });
        if (burnMs > 0) body.on('data', burn);
        body.pipe(res);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
  });
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 0;
server.requestTimeout = 0;
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
// If the runner is killed outright (no chance to clean up), do not outlive it.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();

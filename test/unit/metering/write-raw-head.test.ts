import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { writeRawHead, type HttpReply } from '../../../server/metering/executor.ts';

/** A full garbage collection now (V8's `gc`, exposed for this file). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

type Way = 'writeHead' | 'hijacked' | 'lane';

/**
 * A stream's head: a dozen headers, values that differ per request. Written by Node's `writeHead` alone, or by
 * `writeRawHead` for a reply it hijacks (Fastify's) or one with its own `head` (the chat lane's).
 */
function streamHead(i: number, way: Way): string {
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  const id = `req_${i.toString(36).padStart(12, '0')}`;
  const headers: Record<string, string> = {
    'x-svc-request-id': id, 'x-request-id': id, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache',
    connection: 'keep-alive', 'server-timing': `auth;dur=0.0${i % 10}, admit;dur=0.01${i % 7}, upstream;dur=0.4${i % 9}`,
    'x-ratelimit-limit-requests': '600', 'x-ratelimit-remaining-requests': String(599 - (i % 600)), 'x-ratelimit-reset-requests': `${i % 60}s`,
    'x-ratelimit-limit-tokens': '200000', 'x-ratelimit-remaining-tokens': String(190_000 - i), 'x-ratelimit-reset-tokens': `${i % 60}s`,
  };
  if (way === 'writeHead') res.writeHead(200, headers);
  else if (way === 'hijacked') writeRawHead({ raw: res, hijack: () => undefined } as unknown as HttpReply, 200, headers);
  else writeRawHead({ raw: res, head: (status: number, list: Record<string, string>) => res.writeHead(status, list) } as unknown as HttpReply, 200, headers);
  return (res as ServerResponse & { _header: string })._header;
}

/** Bytes of V8 heap each kept head holds. */
function heapPerHead(way: Way): number {
  const count = 4000;
  const kept: string[] = [];
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < count; i++) kept.push(streamHead(i, way));
  collectGarbage();
  const grown = process.memoryUsage().heapUsed - before;
  expect(kept).toHaveLength(count);
  return grown / count;
}

describe('writeRawHead', () => {
  it('leaves the head Node keeps for a response as one string of the same text, not the tree Node built it as', () => {
    expect(streamHead(7, 'hijacked')).toBe(streamHead(7, 'writeHead'));
    expect(streamHead(7, 'lane')).toBe(streamHead(7, 'writeHead'));
    const tree = heapPerHead('writeHead');
    // A head of ~500 characters: ~2 KB as the tree of pieces Node built (2,007 B here), ~0.5 KB as one string.
    expect(heapPerHead('hijacked')).toBeLessThan(tree / 2);
    expect(heapPerHead('lane')).toBeLessThan(tree / 2);
  });
});

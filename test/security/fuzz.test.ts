/**
 * Issue 15: the CI slice of `npm run fuzz` — 2,000 seeded requests across every route and GraphQL operation,
 * against two instances on real PostgreSQL and Redis. Not one 5xx (nor a GraphQL internal_error), not one
 * dropped connection or hang, every 4xx in the spec's envelope. A failure prints the table and the
 * requests to replay (`npm run fuzz -- --seed=<seed> --count=2000`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatReport, fuzz, isEnvelope } from '../fuzz/fuzz.ts';
import { startFuzzBed, type FuzzBed } from '../fuzz/setup.ts';

let bed: FuzzBed;

beforeAll(async () => {
  bed = await startFuzzBed();
});
afterAll(async () => {
  await bed?.close();
});

describe('fuzz', () => {
  it('walks every route and operation: no 5xx, no hang, no dropped connection, every 4xx in the envelope', { timeout: 300_000 }, async () => {
    // A hang here is an answer that never comes (30 s), not a slow one: the machine may be busy.
    const report = await fuzz(bed.target, { seed: 20261123, count: 2_000, concurrency: 8, hangMs: 30_000 });
    const summary = formatReport(report);
    expect(report.counts, summary).toEqual({ '5xx': 0, hang: 0, envelope: 0, dropped: 0, 'graphql-internal': 0 });
    // Every registered route was tried (the table is built from the app's own route list).
    const tried = new Set([...report.byRoute.keys()]);
    const missed = bed.target.routes.filter((route) => !route.url.startsWith('/assets/') && !tried.has(`${route.method} ${route.url}`));
    expect(missed, summary).toEqual([]);
    expect([...tried].filter((route) => route.startsWith('GraphQL ')).length).toBeGreaterThan(20);
  });

  it('the envelope check itself refuses what is not the envelope', () => {
    expect(isEnvelope('/api/membership/me', '{"statusCode":400,"error":"Bad Request","message":"x"}')).toBe(false);
    expect(isEnvelope('/api/membership/me', '<html>')).toBe(false);
    expect(isEnvelope('/graphql', '{"errors":[{"message":"x"}]}')).toBe(false);
    expect(isEnvelope('/v1/mcp/tools/call', '{"jsonrpc":"2.0","error":{"code":-32000,"message":"x"},"id":null}')).toBe(false);
    const anthropic = '{"type":"error","error":{"type":"invalid_request_error","message":"x"},"request_id":"mbr_x"}';
    expect(isEnvelope('/v1/messages?beta=true', anthropic)).toBe(true);
    expect(isEnvelope('/v1/chat/completions', anthropic)).toBe(false);
    expect(isEnvelope('/v1/messages', '{"type":"error","error":{"type":"invalid_request_error"}}')).toBe(false);
    expect(
      isEnvelope(
        '/api/membership/me',
        '{"ok":false,"requestId":"mbr_x","error":{"message":"m","type":"t","code":"c","param":null},"message":"m","messageZh":"z","code":"c"}',
      ),
    ).toBe(true);
  });
});

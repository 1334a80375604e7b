import { describe, expect, it } from 'vitest';
import { retryAfterSeconds, upstreamHttpFailure, upstreamReason } from '../../../server/metering/upstream-failure.ts';

describe('upstream HTTP failures', () => {
  it('reads the reason from every common error body shape', () => {
    expect(upstreamReason('{"error":{"message":"context too long","type":"invalid_request_error"}}')).toBe('context too long');
    expect(upstreamReason('{"object":"error","message":"This model\'s maximum context length is 4096 tokens.","code":400}')).toBe("This model's maximum context length is 4096 tokens.");
    expect(upstreamReason('{"detail":[{"loc":["body","top_k"],"msg":"must be >= -1"},{"msg":"and more"}]}')).toBe('must be >= -1; and more');
    expect(upstreamReason('{"detail":"Not Found"}')).toBe('Not Found');
    expect(upstreamReason('{"error":"model not loaded"}')).toBe('model not loaded');
    expect(upstreamReason('plain text reason')).toBe('plain text reason');
    expect(upstreamReason('<html><body>502</body></html>')).toBeNull();
    expect(upstreamReason('{"error":{}}')).toBeNull();
    expect(upstreamReason('')).toBeNull();
    expect(upstreamReason(`{"message":"${'x'.repeat(900)}"}`)!.length).toBe(498);
  });

  it('maps statuses to what the client sees', () => {
    const rejected = upstreamHttpFailure(422, '{"detail":"bad"}', undefined);
    expect(rejected).toMatchObject({ code: 'upstream_rejected', upstreamStatus: 422, details: { status: 422 } });
    expect(rejected.details.clientMessage).toBe('The model server rejected the request (HTTP 422): bad. Nothing was billed.');
    expect(upstreamHttpFailure(404, '', undefined).details.clientMessage).toContain('it gave no reason');
    const auth = upstreamHttpFailure(401, '{"error":{"message":"Incorrect API key sk-123"}}', undefined);
    expect(auth.code).toBe('upstream_error');
    expect(auth.details.clientMessage).not.toContain('sk-123');
    expect(upstreamHttpFailure(429, '', '12').details.headers).toEqual({ 'retry-after': '12' });
    expect(upstreamHttpFailure(429, '', undefined).details.headers).toEqual({ 'retry-after': '1' });
    expect(upstreamHttpFailure(503, '', undefined).details.headers).toBeUndefined();
    expect(upstreamHttpFailure(504, '', undefined).code).toBe('upstream_timeout');
    expect(upstreamHttpFailure(500, '', undefined).code).toBe('upstream_error');
  });

  it('reads Retry-After as seconds or an HTTP date, within 1 s to 1 h', () => {
    expect(retryAfterSeconds('3')).toBe(3);
    expect(retryAfterSeconds('0.2')).toBe(1);
    expect(retryAfterSeconds('99999')).toBe(3600);
    expect(retryAfterSeconds(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThanOrEqual(9);
    expect(retryAfterSeconds('soon')).toBeNull();
    expect(retryAfterSeconds(undefined)).toBeNull();
  });
});

/**
 * Request ids: `mbr_` and 26 base64url characters sliced from a pool encoded 256 at a time. Every id is
 * well formed and none repeats, across several refills of the pool; a client's well-formed id is kept.
 */
import { describe, expect, it } from 'vitest';
import { newRequestId, requestIdFrom } from '../../../server/infra/request-id.ts';

describe('request ids', () => {
  it('are mbr_ and 26 URL-safe characters, all different across refills of the pool', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^mbr_[A-Za-z0-9_-]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Each character carries 6 random bits: over 52,000 of them every one of the 64 shows up.
    expect(new Set(ids.join('').replaceAll('mbr_', '')).size).toBe(64);
  });

  it("keep a client's well-formed x-svc-request-id and replace anything else", () => {
    expect(requestIdFrom('mbr_client-trace_01')).toBe('mbr_client-trace_01');
    for (const header of [undefined, '', 'abc', 'mbr_short', 'mbr_has space in it', ['mbr_aaaaaaaaaa']]) {
      expect(requestIdFrom(header)).toMatch(/^mbr_[A-Za-z0-9_-]{26}$/);
    }
  });
});

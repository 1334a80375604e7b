import { describe, expect, it } from 'vitest';
import { unversionedMembershipUrl } from '../../../server/app.ts';
import { openAiDuration } from '../../../server/rate-limit/rate-limit.service.ts';

describe('compatibility helpers', () => {
  it('/api/membership/v1 answers as /api/membership', () => {
    expect(unversionedMembershipUrl('/api/membership/v1/plans')).toBe('/api/membership/plans');
    expect(unversionedMembershipUrl('/api/membership/v1/auth/device/start?x=1')).toBe('/api/membership/auth/device/start?x=1');
    expect(unversionedMembershipUrl('/api/membership/v1')).toBe('/api/membership');
    expect(unversionedMembershipUrl('/api/membership/v1?x')).toBe('/api/membership?x');
    expect(unversionedMembershipUrl('/api/membership/v1x/plans')).toBe('/api/membership/v1x/plans');
    expect(unversionedMembershipUrl('/v1/chat/completions')).toBe('/v1/chat/completions');
  });

  it('writes durations as OpenAI does in x-ratelimit-reset-requests', () => {
    expect(openAiDuration(120)).toBe('120ms');
    expect(openAiDuration(1000)).toBe('1s');
    expect(openAiDuration(1500)).toBe('1.5s');
    expect(openAiDuration(360_000)).toBe('6m0s');
    expect(openAiDuration(3_723_000)).toBe('1h2m3s');
    expect(openAiDuration(-5)).toBe('0ms');
  });
});

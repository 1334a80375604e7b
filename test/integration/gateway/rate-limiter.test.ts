import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../server/errors/app-error.ts';
import type { RedisLayer } from '../../../server/infra/redis.ts';
import { RateLimiter } from '../../../server/rate-limit/rate-limit.service.ts';
import { testRedisUrl } from '../../helpers/env.ts';

const redis = new Redis(testRedisUrl, { keyPrefix: `svc-test:${randomBytes(4).toString('hex')}:` });
const layer = { mode: 'redis', redis } as unknown as RedisLayer;
afterAll(() => redis.quit());

describe('RateLimiter on Redis', () => {
  it('holds a limit across limiter instances (shared Redis) and throws 429 with headers', async () => {
    const a = new RateLimiter(layer);
    const b = new RateLimiter(layer);
    const rule = { key: 'shared', limit: 5, periodMs: 60_000 };
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).hit([rule])));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
    const error = await a.assert([rule]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    const headers = (error as AppError).options.headers!;
    expect((error as AppError).status).toBe(429);
    expect(headers['retry-after']).toBe('12');
    expect(headers['x-ratelimit-limit']).toBe('5');
    expect(headers['x-ratelimit-remaining']).toBe('0');
  });

  it('fails closed when Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    const limiter = new RateLimiter({ mode: 'redis', redis: dead } as unknown as RedisLayer);
    const error = await limiter.hit([{ key: 'x', limit: 1, periodMs: 1000 }]).catch((e: unknown) => e);
    expect((error as AppError).code).toBe('service_unavailable');
    dead.disconnect();
  });
});

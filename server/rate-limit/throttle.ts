/**
 * Throttles for the sign-in surface (sign-in, sign-up, email codes, device start and poll) on top of the
 * service's GCRA limiter, plus counters of wrong guesses (device user codes) that lock for a fixed time.
 * Counters live in Redis when configured, so they hold across instances; in process otherwise. Both fail
 * closed: if Redis cannot answer, the request is refused with 503.
 */
import { AppError } from '../errors/app-error.ts';
import type { RedisLayer } from '../infra/redis.ts';
import type { RateLimitedWhat, RateLimiter, RateRule } from './rate-limit.service.ts';

export class Throttle {
  readonly #redis: RedisLayer;
  readonly #limiter: RateLimiter;
  readonly #counters = new Map<string, { count: number; expiresAt: number }>();

  constructor(redis: RedisLayer, limiter: RateLimiter) {
    this.#redis = redis;
    this.#limiter = limiter;
  }

  /** Counts one request under every rule; throws 429 `rate_limited` with `Retry-After` when any is exhausted. */
  async enforce(rules: readonly RateRule[], what: RateLimitedWhat): Promise<void> {
    await this.#limiter.assert(rules, what);
  }

  /** Current value of a wrong-guess counter. */
  async count(key: string): Promise<number> {
    const client = this.#redis.redis;
    if (!client) {
      const entry = this.#counters.get(key);
      return entry && entry.expiresAt > Date.now() ? entry.count : 0;
    }
    return Number((await this.#guard(() => client.get(`cnt:${key}`))) ?? 0);
  }

  /** Adds one to a counter that disappears `ttlMs` after its first increment; returns the new value. */
  async increment(key: string, ttlMs: number): Promise<number> {
    const client = this.#redis.redis;
    if (!client) {
      const now = Date.now();
      const entry = this.#counters.get(key);
      const next = entry && entry.expiresAt > now ? { ...entry, count: entry.count + 1 } : { count: 1, expiresAt: now + ttlMs };
      this.#counters.set(key, next);
      return next.count;
    }
    const [[, count]] = (await this.#guard(() => client.multi().incr(`cnt:${key}`).pexpire(`cnt:${key}`, ttlMs, 'NX').exec())) as [[null, number]];
    return count;
  }

  /** Takes one back from a counter (a spent try that turned out not to be a wrong guess). */
  async decrement(key: string): Promise<void> {
    const client = this.#redis.redis;
    if (!client) {
      const entry = this.#counters.get(key);
      if (entry && entry.count > 0) entry.count -= 1;
      return;
    }
    await this.#guard(() => client.decr(`cnt:${key}`));
  }

  /** Milliseconds until a counter expires (0 when absent). */
  async ttl(key: string): Promise<number> {
    const client = this.#redis.redis;
    if (!client) return Math.max(0, (this.#counters.get(key)?.expiresAt ?? 0) - Date.now());
    return Math.max(0, await this.#guard(() => client.pttl(`cnt:${key}`)));
  }

  async #guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw new AppError('service_unavailable', 'Rate limiting is unavailable (Redis did not answer); try again shortly.', { cause: error });
    }
  }
}

export const minute = 60_000;
export const hour = 60 * minute;

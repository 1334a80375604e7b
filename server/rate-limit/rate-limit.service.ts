/**
 * The service's one rate limiter: GCRA per key, in Redis (one Lua script, shared across instances) or in
 * process in single-instance mode. Fails closed: if Redis does not answer, `hit` throws
 * `service_unavailable`.
 *
 *   const decision = await services.rateLimits.assert([{ key: `device-start:ip:${ip}`, limit: 10, periodMs: 60_000 }]);
 *   // throws 429 rate_limited with Retry-After and x-ratelimit-* when any rule is exhausted
 */
import { AppError, bilingual, type Bilingual } from '../errors/app-error.ts';
import type { RedisLayer } from '../infra/redis.ts';
import { hitEachRule, withGcraScripts, type GcraRedis } from './gcra.cluster.ts';
import { gcraParams, LocalGcra, type RateDecision, type RateRule } from './gcra.ts';

export type { RateDecision, RateRule } from './gcra.ts';

export class RateLimiter {
  readonly #redis: GcraRedis | null;
  readonly #local = new LocalGcra();

  constructor(layer: RedisLayer) {
    this.#redis = layer.redis ? withGcraScripts(layer.redis) : null;
  }

  /** Counts one request against every rule, all or nothing. Denied requests are not counted. */
  async hit(rules: readonly RateRule[], cost = 1): Promise<RateDecision> {
    if (rules.length === 0) throw new Error('RateLimiter.hit needs at least one rule');
    if (!this.#redis) return this.#local.check(rules, Date.now(), cost);
    if (this.#redis.isCluster && rules.length > 1) {
      // The rules' keys live in different slots: each checked on its own, all or nothing (gcra.cluster.ts).
      try {
        return await hitEachRule(this.#redis, rules, cost, (rule) => `rl:${rule.key}`);
      } catch (error) {
        throw new AppError('service_unavailable', 'Rate limiting is unavailable; try again shortly.', { stage: 'rate_limit', cause: error });
      }
    }
    const args: (string | number)[] = rules.map((rule) => `rl:${rule.key}`);
    for (const rule of rules) {
      const { emissionMs, toleranceMs } = gcraParams(rule);
      args.push(emissionMs, toleranceMs, cost);
    }
    let result: number[];
    try {
      result = await this.#redis.svcRateLimit(rules.length, ...args);
    } catch (error) {
      throw new AppError('service_unavailable', 'Rate limiting is unavailable; try again shortly.', { stage: 'rate_limit', cause: error });
    }
    const [allowed, bind, remaining, resetMs, retryAfterMs] = result as [number, number, number, number, number];
    return { allowed: allowed === 1, rule: rules[bind - 1]!, remaining, resetMs, retryAfterMs };
  }

  /** `hit`, and throws 429 `rate_limited` (with headers) when denied. */
  async assert(rules: readonly RateRule[], what?: RateLimitedWhat): Promise<RateDecision> {
    const decision = await this.hit(rules);
    if (!decision.allowed) throw rateLimitedError(decision.retryAfterMs, { what, decision });
    return decision;
  }
}

/**
 * `x-ratelimit-limit/remaining/reset` (reset in whole seconds, the IETF draft's names) and the same numbers
 * under OpenAI's names, which SDK users and proxies read: `x-ratelimit-limit-requests`,
 * `-remaining-requests`, `-reset-requests` (a duration such as `1s`, `6m0s`, `120ms`).
 */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const limit = String(decision.rule.limit);
  const remaining = String(Math.max(0, decision.remaining));
  return {
    'x-ratelimit-limit': limit,
    'x-ratelimit-remaining': remaining,
    'x-ratelimit-reset': String(Math.ceil(decision.resetMs / 1000)),
    'x-ratelimit-limit-requests': limit,
    'x-ratelimit-remaining-requests': remaining,
    'x-ratelimit-reset-requests': openAiDuration(decision.resetMs),
  };
}

/** A duration as OpenAI writes it in `x-ratelimit-reset-requests`: `120ms`, `1.5s`, `6m0s`, `1h2m3s`. */
export function openAiDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = (total % 60_000) / 1000;
  const secondsText = `${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, '')}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

/**
 * What was too many, in both languages: the English noun ("sign-in attempts") and a whole Chinese clause
 * ("登录尝试过于频繁"). A plain English string still works; its Chinese is then a general "too frequent".
 */
export type RateLimitedWhat = string | Bilingual;

/**
 * The one 429 of the service: `Retry-After` (and `x-ratelimit-*` when a limiter decision is at hand),
 * `retryAfterSeconds` in the envelope. `what` names what was too many ("sign-in attempts").
 */
export function rateLimitedError(retryAfterMs: number, options: { what?: RateLimitedWhat; decision?: RateDecision } = {}): AppError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const what = typeof options.what === 'string' ? { en: options.what, zh: '操作过于频繁' } : (options.what ?? { en: 'requests', zh: '请求过于频繁' });
  return new AppError('rate_limited', bilingual('Too many {what}; retry in {seconds} s.', '{what}，请在 {seconds} 秒后重试。', { what, seconds: retryAfter }), {
    headers: { ...(options.decision ? rateLimitHeaders(options.decision) : {}), 'retry-after': String(retryAfter) },
    details: { retryAfterSeconds: retryAfter },
  });
}

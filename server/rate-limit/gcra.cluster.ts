/**
 * Rate limits on a Redis Cluster, where the keys of one request's rules (an IP, an email, an account) hash to
 * different slots and so cannot be checked by one script. Each rule is checked atomically on its own slot
 * (all of them at once, one round trip); when any refuses, what the others took is given back. No rule ever
 * lets through more than its limit. The approximation, bounded by the requests in flight: a request racing
 * with one that is being given back may be refused although an all-at-once check would have let it through.
 */
import type { RedisClient } from '../infra/redis.ts';
import { gcraParams, rateLimitScript, type RateDecision, type RateRule } from './gcra.ts';

/** KEYS: a rule key. ARGV: milliseconds of TAT to give back (emission × cost). Never moves the TAT below now. */
const refundScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local back = tat - tonumber(ARGV[1])
if back <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], back, 'PX', math.ceil(back - now))
end
return 1
`;

export type GcraRedis = RedisClient & {
  svcRateLimit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  svcRateRefund(numKeys: number, ...args: (string | number)[]): Promise<number>;
};

/** Defines the limiter's scripts on a client (EVALSHA with a transparent EVAL fallback). Idempotent. */
export function withGcraScripts(client: RedisClient): GcraRedis {
  const redis = client as GcraRedis;
  if (typeof redis.svcRateLimit !== 'function') redis.defineCommand('svcRateLimit', { lua: rateLimitScript });
  if (typeof redis.svcRateRefund !== 'function') redis.defineCommand('svcRateRefund', { lua: refundScript });
  return redis;
}

/** One rule in its own slot: `[allowed, 1, remaining, reset, retry]` as the limiter script returns it. */
async function hitOne(redis: GcraRedis, key: string, rule: RateRule, cost: number): Promise<number[]> {
  const { emissionMs, toleranceMs } = gcraParams(rule);
  return redis.svcRateLimit(1, key, emissionMs, toleranceMs, cost);
}

/** Gives back what `hitEachRule` took for these rules (a later step refused the request). Best effort. */
export async function refundRules(redis: GcraRedis, rules: readonly RateRule[], cost: number, keyOf: (rule: RateRule) => string): Promise<void> {
  await Promise.all(rules.map((rule) => redis.svcRateRefund(1, keyOf(rule), gcraParams(rule).emissionMs * cost).catch(() => undefined)));
}

/**
 * Counts one request against every rule, all or nothing, each rule on its own slot. The decision names the
 * binding rule as the one-script limiter does: the refusing one with the longest wait, else the one with
 * the fewest requests left.
 */
export async function hitEachRule(redis: GcraRedis, rules: readonly RateRule[], cost: number, keyOf: (rule: RateRule) => string): Promise<RateDecision> {
  const settled = await Promise.allSettled(rules.map((rule) => hitOne(redis, keyOf(rule), rule, cost)));
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  const results = settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : null));
  const allowedRules = rules.filter((_, i) => results[i]?.[0] === 1);
  if (failed) {
    await refundRules(redis, allowedRules, cost, keyOf);
    throw (failed as PromiseRejectedResult).reason;
  }
  let decision: RateDecision | null = null;
  for (const [i, result] of results.entries()) {
    const [allowed, , remaining, resetMs, retryAfterMs] = result as [number, number, number, number, number];
    const candidate: RateDecision = { allowed: allowed === 1, rule: rules[i]!, remaining, resetMs, retryAfterMs };
    if (!decision) decision = candidate;
    else if (!candidate.allowed && (decision.allowed || candidate.retryAfterMs > decision.retryAfterMs)) decision = candidate;
    else if (candidate.allowed && decision.allowed && candidate.remaining < decision.remaining) decision = candidate;
  }
  if (!decision!.allowed) await refundRules(redis, allowedRules, cost, keyOf);
  return decision!;
}

/**
 * GCRA (generic cell rate algorithm): one timestamp per key — the "theoretical arrival time" (TAT) — instead
 * of a counter per window, so limits are smooth and cost one key. A rule allows `burst` requests at once
 * and refills at `limit` per `periodMs`. The same math runs in Redis (Lua, below) and in process.
 */

export interface RateRule {
  /** Unique per subject, e.g. `ip:203.0.113.7` or `acct:<uuid>`; prefixed with `rl:` in Redis. */
  key: string;
  /** Requests per period. */
  limit: number;
  periodMs: number;
  /** Requests allowed back to back; default `limit`. */
  burst?: number;
  /**
   * `payer`: the key belongs to the admitted payer (its account or one of its credentials), so on a Redis
   * Cluster it carries the payer's hash tag and is checked in the admission script itself; other keys (an
   * IP) are checked on their own slot just before.
   */
  scope?: 'payer';
}

export interface RateDecision {
  allowed: boolean;
  /** The rule that decided (the most restrictive one). */
  rule: RateRule;
  /** Requests left right now under that rule. */
  remaining: number;
  /** Until that rule is fully replenished. */
  resetMs: number;
  /** When denied: until the request would be allowed. */
  retryAfterMs: number;
}

/** Emission interval and burst tolerance in milliseconds (fractional is fine). */
export function gcraParams(rule: RateRule): { emissionMs: number; toleranceMs: number } {
  const emissionMs = rule.periodMs / rule.limit;
  return { emissionMs, toleranceMs: emissionMs * (rule.burst ?? rule.limit) };
}

/**
 * Lua: checks every rule, and only when all allow writes every new TAT (all or nothing).
 * `gcra_check(keys, argv, first_key, first_arg, n, now)` reads ARGV triplets (emission, tolerance, cost)
 * and returns `allowed, binding_index, remaining, reset_ms, retry_ms, new_tats`. Shared with the gateway's
 * admission script so a chat request checks its limits and reserves quota in one round trip.
 */
export const gcraLua = `
local function gcra_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function gcra_check(first_key, first_arg, n, now)
  local allowed = 1
  local bind, best_remaining, bind_reset, retry = 1, math.huge, 0, 0
  local tats = {}
  for i = 1, n do
    local key = KEYS[first_key + i - 1]
    local a = first_arg + (i - 1) * 3
    local emission = tonumber(ARGV[a])
    local tolerance = tonumber(ARGV[a + 1])
    local cost = tonumber(ARGV[a + 2])
    local tat = tonumber(redis.call('GET', key) or '0')
    if tat < now then tat = now end
    local new_tat = tat + emission * cost
    local allow_at = new_tat - tolerance
    if now < allow_at then
      if allowed == 1 or (allow_at - now) > retry then
        bind, retry = i, allow_at - now
        best_remaining, bind_reset = 0, tat - now
      end
      allowed = 0
    elseif allowed == 1 then
      local remaining = math.floor((now + tolerance - new_tat) / emission)
      if remaining < best_remaining then
        bind, best_remaining, bind_reset = i, remaining, new_tat - now
      end
    end
    tats[i] = new_tat
  end
  if best_remaining == math.huge then best_remaining = 0 end
  return allowed, bind, best_remaining, bind_reset, retry, tats
end

local function gcra_commit(first_key, n, now, tats)
  for i = 1, n do
    local ttl = math.ceil(tats[i] - now)
    if ttl < 1 then ttl = 1 end
    redis.call('SET', KEYS[first_key + i - 1], tats[i], 'PX', ttl)
  end
end
`;

/** The standalone limiter script: KEYS = rule keys, ARGV = (emission, tolerance, cost) per key. */
export const rateLimitScript = `${gcraLua}
local n = #KEYS
local now = gcra_now()
local allowed, bind, remaining, reset, retry, tats = gcra_check(1, 1, n, now)
if allowed == 1 then gcra_commit(1, n, now, tats) end
return {allowed, bind, remaining, math.ceil(reset), math.ceil(retry)}
`;

/** The in-process GCRA, for single-instance mode. Same semantics as the Lua above. */
export class LocalGcra {
  readonly #tats = new Map<string, number>();
  #sweepAt = 0;

  check(rules: readonly RateRule[], now = Date.now(), cost = 1): RateDecision {
    if (now >= this.#sweepAt) this.#sweep(now);
    let allowed = true;
    let bind = 0;
    let bestRemaining = Number.POSITIVE_INFINITY;
    let bindReset = 0;
    let retry = 0;
    const tats: number[] = [];
    rules.forEach((rule, i) => {
      const { emissionMs, toleranceMs } = gcraParams(rule);
      const tat = Math.max(this.#tats.get(rule.key) ?? 0, now);
      const newTat = tat + emissionMs * cost;
      const allowAt = newTat - toleranceMs;
      if (now < allowAt) {
        if (allowed || allowAt - now > retry) {
          bind = i;
          retry = allowAt - now;
          bestRemaining = 0;
          bindReset = tat - now;
        }
        allowed = false;
      } else if (allowed) {
        const remaining = Math.floor((now + toleranceMs - newTat) / emissionMs);
        if (remaining < bestRemaining) {
          bind = i;
          bestRemaining = remaining;
          bindReset = newTat - now;
        }
      }
      tats.push(newTat);
    });
    if (allowed) rules.forEach((rule, i) => this.#tats.set(rule.key, tats[i]!));
    return {
      allowed,
      rule: rules[bind]!,
      remaining: Number.isFinite(bestRemaining) ? bestRemaining : 0,
      resetMs: Math.ceil(bindReset),
      retryAfterMs: Math.ceil(retry),
    };
  }

  #sweep(now: number): void {
    for (const [key, tat] of this.#tats) if (tat < now) this.#tats.delete(key);
    this.#sweepAt = now + 60_000;
  }
}

/**
 * Admission, in one atomic step (DESIGN §2, SECURITY "Quota and ledger"): the rate limits (per IP, per
 * payer, per credential), the payer's concurrent-stream cap and the worst-case reservation against the
 * day, week and month pools of the model's class — one Redis Lua script, or one conditional SQL statement
 * in embedded mode. Fails closed (503) when Redis or the database is away. A refusal is the envelope's
 * 429 or 402 with what the client needs to act on it.
 */
import type { Config } from '../config/config.ts';
import { money, type Micros } from '../config/money.ts';
import { AppError, bilingual } from '../errors/app-error.ts';
import type { Principal } from '../authz/principal.ts';
import type { PackageEntitlements } from './entitlements.ts';
import type { RateDecision, RateRule } from '../rate-limit/gcra.ts';
import { rateLimitedError, rateLimitHeaders } from '../rate-limit/rate-limit.service.ts';
import type { TurnPlan } from './executor.ts';
import type { AdmissionRequest, KeyBudgetRefusal, PoolStore } from './pool.store.ts';
import type { Settlement } from './settlement.ts';
import type { CreditPayment } from './credit-payment.ts';
import type { Turn } from './turn.ts';
import type { CurrentWindows, PoolWindows } from './windows.ts';
import { meteredCost, modelRates } from './pricing.ts';

/**
 * `credit` with a capped key's hold on its caps (`PoolStore.holdKeyCap`, taken at admission) moved to the
 * turn's cost when the turn settles or the sweeper ends its credit hold, exactly as a pool-paid turn's
 * reservation moves the key's counters. A turn's own settlement moves both at once (its credit is given
 * back no later than before caps held credit-paid turns); should its instance die in between, a cap left
 * held only over-counts the key until its window turns, never lets it overspend. Nothing moves for a turn
 * without a hold (an uncapped key).
 */
export function keyCappedCredit(credit: CreditPayment, store: PoolStore): CreditPayment {
  const { holdKeyCap, releaseKeyCap } = store;
  if (!holdKeyCap || !releaseKeyCap) return credit;
  return {
    paysFromCredit: (payerId) => credit.paysFromCredit(payerId),
    reserveTurn: (payerId, requestId, micros, modelClass) => credit.reserveTurn(payerId, requestId, micros, modelClass),
    async settleTurn(payerId, requestId, reservedMicros, costMicros) {
      await Promise.all([store.releaseKeyCap!(requestId, payerId, Math.min(costMicros, reservedMicros)), credit.settleTurn(payerId, requestId, reservedMicros, costMicros)]);
    },
    checkpoint: (items) => credit.checkpoint(items),
    expired: (now, limit) => credit.expired(now, limit),
    async settleExpired(requestId, payerId, costMicros) {
      await store.releaseKeyCap!(requestId, payerId, costMicros);
      return credit.settleExpired(requestId, payerId, costMicros);
    },
  };
}

const windowAdjective = {
  day: { en: 'daily', zh: '每日' },
  week: { en: 'weekly', zh: '每周' },
  month: { en: 'monthly', zh: '每月' },
} as const;
const className = { fast: { en: 'fast', zh: '快速档' }, premium: { en: 'premium', zh: '旗舰档' } } as const;

const keyWindowAdjective = { day: { en: 'daily', zh: '每日' }, month: { en: 'monthly', zh: '每月' } } as const;

/** 429 for a key's own requests-per-minute cap: names the key's limit, not the plan's. */
function keyRateLimited(perMinute: number, decision: RateDecision): AppError {
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new AppError(
    'key_rate_limited',
    bilingual(
      "This API key's cap of {rpm} requests per minute is reached; retry in {seconds} s, or ask the key's owner to raise it.",
      '该 API 密钥每分钟 {rpm} 次请求的上限已达到；请在 {seconds} 秒后重试，或请密钥所有者调高上限。',
      { rpm: perMinute, seconds },
    ),
    {
      headers: { ...rateLimitHeaders(decision), 'retry-after': String(seconds) },
      details: { keyLimit: 'requests_per_minute', retryAfterSeconds: seconds },
    },
  );
}

/**
 * 402 for a key's own day or month spend cap (issue 51): whichever source would pay (pools or credit), and
 * what a quote of the same body says (modules/quote). Names the key's cap, not the plan's.
 */
export function keyBudgetError(currency: string, windows: CurrentWindows, refusal: KeyBudgetRefusal, keyId: string, reservedMicros: Micros, productModel: string): AppError {
  const amount = (micros: number) => money(micros, currency);
  const window = windows[refusal.window];
  const values = {
    window: keyWindowAdjective[refusal.window],
    limit: amount(refusal.limitMicros).amount,
    used: amount(refusal.usedMicros).amount,
    cost: amount(reservedMicros).amount,
    currency,
    resetsAt: window.resetsAt.toISOString(),
  };
  const message =
    refusal.usedMicros >= refusal.limitMicros
      ? bilingual(
          "This API key's {window} spend cap of {limit} {currency} is used up ({used} {currency} spent or reserved). It resets at {resetsAt}; the key's owner can raise the cap.",
          '该 API 密钥的{window}消费上限 {limit} {currency} 已用完（已花费或预留 {used} {currency}），将于 {resetsAt} 重置；密钥所有者可调高上限。',
          values,
        )
      : bilingual(
          "This API key's {window} spend cap of {limit} {currency} has {left} {currency} left, but this request could cost up to {cost} {currency}: lower max_tokens, or wait until {resetsAt}, when the cap resets.",
          '该 API 密钥的{window}消费上限 {limit} {currency} 还剩 {left} {currency}，但本次请求最多可能花费 {cost} {currency}：请减小 max_tokens，或等到 {resetsAt} 上限重置。',
          { ...values, left: amount(Math.max(0, refusal.limitMicros - refusal.usedMicros)).amount },
        );
  return new AppError('key_budget_exceeded', message, {
    debug: { productModel },
    details: {
      keyLimit: `budget_${refusal.window}`,
      keyBudget: {
        keyId,
        window: refusal.window,
        resetsAt: window.resetsAt.toISOString(),
        used: amount(refusal.usedMicros),
        limit: amount(refusal.limitMicros),
        requestMaxCost: amount(reservedMicros),
      },
    },
  });
}

export interface AdmissionDeps {
  config: Config;
  entitlements: PackageEntitlements;
  store: PoolStore;
  windows: PoolWindows;
  settlement: Settlement;
  credit?: CreditPayment | undefined;
}

/** A principal's last rate rules and what they were made from: the same inputs give the same (immutable) rules. */
interface RulesMade {
  ip: string;
  payerId: string;
  credentialId: string;
  payerPerMinute: number;
  rules: readonly RateRule[];
}

export class Admission {
  readonly #deps: AdmissionDeps;
  readonly #streamCap: number;
  readonly #ttlMs: number;
  readonly #ipPerMinute: number;
  readonly #credentialPerMinute: number | undefined;
  /**
   * Per principal (the authentication cache hands out the same object for a key until it refreshes it):
   * a busy key's requests reuse one rules array, and the leasing store the lease key it made from it,
   * instead of three rule objects, their keys and that key built per request (~1.8 KB of garbage each).
   */
  readonly #rulesOf = new WeakMap<Principal, RulesMade>();

  constructor(deps: AdmissionDeps) {
    this.#deps = deps;
    const { rateLimits, gateway } = deps.config;
    this.#streamCap = rateLimits.concurrentStreamsPerAccount;
    this.#ttlMs = gateway.reservationTtlSeconds * 1000;
    this.#ipPerMinute = rateLimits.ipPerMinute;
    this.#credentialPerMinute = rateLimits.credentialPerMinute;
  }

  get reservationTtlMs(): number {
    return this.#ttlMs;
  }

  /** Per IP, per payer and per credential (DESIGN §4 "Rate limits"). The array and its rules are never changed. */
  rateRules(ip: string, principal: Principal, payerPerMinute: number): readonly RateRule[] {
    const payerId = principal.payer.id;
    const credentialId = principal.credential.id;
    const made = this.#rulesOf.get(principal);
    if (made && made.ip === ip && made.payerId === payerId && made.credentialId === credentialId && made.payerPerMinute === payerPerMinute) return made.rules;
    // A key's own rpm (below the plan's, checked when it is set) replaces the credential rule's limit.
    const keyPerMinute = principal.credential.limits?.requestsPerMinute ?? null;
    const credentialLimit = Math.min(this.#credentialPerMinute ?? payerPerMinute, keyPerMinute ?? Number.MAX_SAFE_INTEGER);
    const rules = Object.freeze([
      Object.freeze({ key: `ip:${ip}`, limit: this.#ipPerMinute, periodMs: 60_000 }),
      Object.freeze({ key: `acct:${payerId}`, limit: payerPerMinute, periodMs: 60_000, scope: 'payer' as const }),
      Object.freeze({ key: `cred:${credentialId}`, limit: credentialLimit, periodMs: 60_000, scope: 'payer' as const }),
    ]);
    this.#rulesOf.set(principal, { ip, payerId, credentialId, payerPerMinute, rules });
    return rules;
  }

  /**
   * Admits the turn or throws (429, 402, 503). On success the turn holds its reservation (`turn.ref`).
   * `planned` lets a 402 say what sets the worst case (`Executor.describeWorstCase`).
   */
  admit(turn: Turn, ip: string, planned?: TurnPlan<unknown, unknown>): Promise<void> | undefined {
    const { settlement, entitlements, windows: poolWindows, store } = this.#deps;
    if (!settlement.databaseHealthy) {
      throw new AppError('service_unavailable', 'Usage accounting is unavailable (database unreachable); nothing was sent upstream.', { stage: 'quota' });
    }
    const { principal, model } = turn;
    const entitled = entitlements.of(principal.payer.package);
    const request: AdmissionRequest = {
      requestId: turn.id,
      payerId: principal.payer.id,
      class: model.class,
      windows: poolWindows.current(),
      reserveMicros: turn.reservedMicros,
      limits: entitled.pools[model.class],
      rateRules: this.rateRules(ip, principal, entitled.requestsPerMinute),
      streamCap: turn.stream ? this.#streamCap : 0,
      ttlMs: this.#ttlMs,
    };
    const limits = principal.credential.limits;
    if (limits) {
      request.exact = true;
      if (limits.budgetDayMicros !== null || limits.budgetMonthMicros !== null) {
        request.keyCap = { keyId: principal.credential.id, day: limits.budgetDayMicros, month: limits.budgetMonthMicros };
      }
    }
    // Under a lease this instance holds, at once; otherwise (and for every refusal) the store's atomic step.
    const now = store.admitNow?.(request);
    if (now?.ok) {
      this.#hold(turn, request, now.rate);
      return undefined;
    }
    return this.#admit(turn, request, planned);
  }

  /**
   * The pools cannot take the turn: a payer who opted in pays it from credit at list price (no promotion)
   * instead of a 402. The rate limits were already counted by the refused admission; no pool moves. A key
   * with spend caps holds the credit-paid worst case on its caps first, in the store's atomic step as a
   * pool-paid turn does (`PoolStore.holdKeyCap`), so it never spends past them whichever source pays; the
   * hold is given back when the credit does not pay, and moved to the turn's cost when it settles
   * (`keyCappedCredit`). Over its cap: the key's 402, when the payer would otherwise have paid from credit.
   */
  async #payFromCredit(turn: Turn, request: AdmissionRequest): Promise<boolean> {
    const credit = this.#deps.credit;
    if (!credit) return false;
    const { model } = turn;
    const rates = modelRates(this.#deps.config, model.id, true) ?? modelRates(this.#deps.config, model.resolvedId, true);
    if (!rates) return false;
    const reserved = meteredCost(rates, turn.worstCase);
    const { store } = this.#deps;
    const capped = request.keyCap !== undefined && store.holdKeyCap !== undefined && store.releaseKeyCap !== undefined;
    const unavailable = (error: unknown) => new AppError('service_unavailable', 'Credit accounting is unavailable; nothing was sent upstream. Retry shortly.', { stage: 'quota', cause: error });
    if (capped) {
      let refused;
      try {
        refused = await store.holdKeyCap!({ ...request, reserveMicros: reserved });
      } catch (error) {
        throw unavailable(error);
      }
      if (refused) {
        // Only a payer credit would have paid hears about the key's cap; the others get the pool's 402.
        const opted = await credit.paysFromCredit(turn.principal.payer.id).catch((error: unknown) => {
          throw unavailable(error);
        });
        if (!opted) return false;
        throw keyBudgetError(this.#deps.config.currency, request.windows, refused, turn.principal.credential.id, reserved, model.id);
      }
    }
    let spent;
    try {
      spent = await credit.reserveTurn(turn.principal.payer.id, turn.id, reserved, model.class);
    } catch (error) {
      if (capped) await store.releaseKeyCap!(turn.id, turn.principal.payer.id, 0).catch(() => undefined);
      throw unavailable(error);
    }
    if (!spent) {
      if (capped) await store.releaseKeyCap!(turn.id, turn.principal.payer.id, 0).catch(() => undefined);
      return false;
    }
    turn.model = { ...model, rates };
    turn.reservedMicros = reserved;
    turn.paidFromCredit = true;
    return true;
  }

  #hold(turn: Turn, request: AdmissionRequest, rate: RateDecision): void {
    turn.ref = { requestId: turn.id, payerId: request.payerId, class: request.class, windows: request.windows, stream: turn.stream };
    if (request.keyCap) turn.ref.capKeyId = request.keyCap.keyId;
    turn.rate = rate;
  }

  async #admit(turn: Turn, request: AdmissionRequest, planned: TurnPlan<unknown, unknown> | undefined): Promise<void> {
    const { config } = this.#deps;
    const { model } = turn;
    const { windows } = request;
    let admission;
    try {
      admission = await this.#deps.store.admit(request);
    } catch (error) {
      throw new AppError('service_unavailable', 'Usage accounting is unavailable; nothing was sent upstream. Retry shortly.', { stage: 'quota', cause: error });
    }
    if (admission.ok) {
      this.#hold(turn, request, admission.rate);
      return;
    }
    switch (admission.reason) {
      case 'rate_limited': {
        const keyPerMinute = turn.principal.credential.limits?.requestsPerMinute ?? null;
        const { rule } = admission.rate;
        if (keyPerMinute !== null && rule.key.startsWith('cred:') && rule.limit === keyPerMinute) throw keyRateLimited(keyPerMinute, admission.rate);
        throw rateLimitedError(admission.rate.retryAfterMs, { decision: admission.rate });
      }
      case 'key_budget':
        throw keyBudgetError(config.currency, windows, admission, turn.principal.credential.id, turn.reservedMicros, model.id);
      case 'stream_cap':
        throw new AppError('rate_limited', bilingual('Too many concurrent streams: at most {cap} at once.', '并发的流式请求过多：最多同时进行 {cap} 个。', { cap: admission.cap }), {
          headers: { 'retry-after': '1' },
          details: { retryAfterSeconds: 1 },
        });
      case 'quota': {
        if (await this.#payFromCredit(turn, request)) return;
        const window = windows[admission.window];
        const amount = (micros: number) => money(micros, config.currency);
        const limit = `${amount(admission.limitMicros).amount} ${config.currency}`;
        const used =
          admission.usedMicros === 0
            ? { en: `none of ${limit} used yet`, zh: `尚未使用，共 ${limit}` }
            : { en: `used ${amount(admission.usedMicros).amount} of ${limit}`, zh: `已用 ${amount(admission.usedMicros).amount} / ${limit}` };
        const values = {
          class: className[model.class],
          window: windowAdjective[admission.window],
          used,
          left: amount(Math.max(0, admission.limitMicros - admission.usedMicros)).amount,
          cost: amount(turn.reservedMicros).amount,
          currency: config.currency,
          resetsAt: window.resetsAt.toISOString(),
        };
        // Used up, or merely too small for this request's worst case: the second one the client can fix.
        const note = planned?.executor.describeWorstCase?.(planned.call);
        const message =
          admission.usedMicros >= admission.limitMicros
            ? bilingual(
                'Your {class} {window} pool is used up ({used}). It resets at {resetsAt}; a larger plan has larger pools.',
                '您的{class}{window}额度已用完（{used}），将于 {resetsAt} 重置；更高的套餐有更大的额度。',
                values,
              )
            : note
              ? bilingual(
                  'Your {class} {window} pool has {left} {currency} left ({used}), but this request could cost up to {cost} {currency} because {note}, or wait until {resetsAt}, when the pool resets.',
                  '您的{class}{window}额度还剩 {left} {currency}（{used}），但本次请求最多可能花费 {cost} {currency}，因为{note}，或等到 {resetsAt} 额度重置。',
                  { ...values, note },
                )
              : bilingual(
                  'Your {class} {window} pool has {left} {currency} left ({used}), but this request could cost up to {cost} {currency}; wait until {resetsAt}, when the pool resets.',
                  '您的{class}{window}额度还剩 {left} {currency}（{used}），但本次请求最多可能花费 {cost} {currency}；请等到 {resetsAt} 额度重置。',
                  values,
                );
        throw new AppError(
          'quota_exceeded',
          message,
          {
            debug: { productModel: model.id },
            details: {
              quota: {
                class: model.class,
                window: admission.window,
                resetsAt: window.resetsAt.toISOString(),
                used: amount(admission.usedMicros),
                limit: amount(admission.limitMicros),
                requestMaxCost: amount(turn.reservedMicros),
              },
            },
          },
        );
      }
    }
  }
}

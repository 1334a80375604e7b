/**
 * The gateway's dependencies, resolved once at start: authentication, the routing table, pools and
 * settlement, rate-limit parameters. `handleChat` (chat.pipeline.ts) reads everything from here, so the hot
 * path does no config lookups of its own.
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Config } from '../../config/config.ts';
import type { Micros } from '../../config/money.ts';
import type { Principal } from '../identity/principal.ts';
import { money, type Money } from '../../config/money.ts';
import type { ModelRegistry } from '../model/model.registry.ts';
import type { RateRule } from '../rate-limit/gcra.ts';
import type { Settlement } from '../usage/settlement.ts';
import type { UsageService } from '../usage/usage.service.ts';
import type { ValidationLimits } from './chat.validate.ts';
import { TokenEstimate } from './token-estimate.ts';
import type { UpstreamUsage } from './stream-rewriter.ts';
import type { Turn } from './chat.pipeline.ts';

type CountTokens = (text: string) => number;
let countTokens: CountTokens | null = null;

/**
 * The tokenizer loads on the first request that needs an estimate (~100 ms once), not at start: most
 * upstreams report usage, and it costs ~40 MB. cl100k is half the size of o200k; for an unknown upstream
 * model either is an estimate, and the ledger row says so (`estimated`).
 */
async function tokenizer(): Promise<CountTokens> {
  if (!countTokens) countTokens = (await import('gpt-tokenizer/encoding/cl100k_base')).countTokens as CountTokens;
  return countTokens;
}

export interface ChatGatewayDeps {
  config: Config;
  authenticate(authorization: string | undefined): Promise<Principal>;
  registry: ModelRegistry;
  usage: UsageService;
  settlement: Settlement;
  log: Logger;
}

export class ChatGateway {
  readonly authenticate: (authorization: string | undefined) => Promise<Principal>;
  readonly registry: ModelRegistry;
  readonly usage: UsageService;
  readonly settlement: Settlement;
  readonly log: Logger;
  readonly validationLimits: ValidationLimits;
  readonly streamCap: number;
  readonly reservationTtlMs: number;
  /** How long a turn may last: it must settle before its reservation expires (see the constructor). */
  readonly turnLimitMs: number;
  readonly currency: string;
  readonly #config: Config;
  readonly #modelIds = new Map<string, string[]>();

  constructor(deps: ChatGatewayDeps) {
    const { config } = deps;
    this.#config = config;
    this.authenticate = deps.authenticate;
    this.registry = deps.registry;
    this.usage = deps.usage;
    this.settlement = deps.settlement;
    this.log = deps.log;
    this.currency = config.currency;
    this.streamCap = config.rateLimits.concurrentStreamsPerAccount;
    this.reservationTtlMs = config.gateway.reservationTtlSeconds * 1000;
    // The sweeper takes a reservation past its TTL for one a dead instance abandoned, so a live turn must end
    // and settle well before: leave room for the longest silence an upstream may keep (its timeout, checked
    // between chunks) and for settlement itself.
    const longestSilenceMs = Math.max(config.gateway.upstreamTimeoutMs, ...Object.values(config.upstreams).map((upstream) => upstream.timeoutMs));
    this.turnLimitMs = this.reservationTtlMs - Math.min(this.reservationTtlMs / 2, longestSilenceMs + 60_000);
    this.validationLimits = {
      maxMessages: config.gateway.maxMessages,
      maxOutputTokens: (model) => deps.registry.get(model)?.maxOutputTokens,
    };
  }

  money = (micros: Micros): Money => money(micros, this.currency);

  /** Product ids a plan package may use, in catalogue order. */
  modelIdsFor(packageId: string): string[] {
    let ids = this.#modelIds.get(packageId);
    if (!ids) {
      const allowed = this.usage.limitsFor(packageId).models;
      ids = Object.keys(this.#config.models).filter((id) => allowed === null || allowed.has(id));
      this.#modelIds.set(packageId, ids);
    }
    return ids;
  }

  /** Per IP, per account and per credential (DESIGN §4 "Rate limits"). */
  rateRules(ip: string, principal: Principal, accountPerMinute: number): RateRule[] {
    const { ipPerMinute, credentialPerMinute } = this.#config.rateLimits;
    return [
      { key: `ip:${ip}`, limit: ipPerMinute, periodMs: 60_000 },
      { key: `acct:${principal.accountId}`, limit: accountPerMinute, periodMs: 60_000 },
      { key: `cred:${principal.credential.id}`, limit: credentialPerMinute ?? accountPerMinute, periodMs: 60_000 },
    ];
  }

  /**
   * Token counts with a tokenizer, for when the upstream did not report usage. Capped by the reservation.
   * The produced text is counted first: with a bounded estimate (`TokenEstimate`) it is the part to get right.
   */
  async estimateUsage(turn: Turn): Promise<UpstreamUsage> {
    const estimate = new TokenEstimate(await tokenizer());
    const produced = turn.rewriter ? turn.rewriter.producedText() : turn.produced;
    const completion = produced && produced.length > 0 ? estimate.count(produced.join('')) : 0;
    let prompt = 3;
    for (const message of turn.body.messages) {
      prompt += 4;
      const content = message.content;
      if (typeof content === 'string') prompt += estimate.count(content);
      else if (Array.isArray(content)) {
        for (const part of content as { text?: unknown }[]) if (typeof part?.text === 'string') prompt += estimate.count(part.text);
      }
    }
    const p = Math.min(prompt, turn.promptBound);
    const c = Math.min(completion, turn.outputBound);
    return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
  }
}

/**
 * Pricing (spec §2.1, DESIGN §4): effective price = list × (1 − promotion for the class), per 1,000,000
 * tokens, in integer micro-units of the configured currency. A turn's cost rounds up to whole micros, so
 * the reservation (worst case) always covers the settled cost.
 *
 * Every figure a client or a member sees about one request's price comes from here, from the rates it was
 * billed at: the ledger row's cost and the reply's `x-svc-cost` (`turnCost`), the `usage.cost` of a stream
 * (`costStamp`), the breakdown on the request's page (`priceBreakdown`) and a quote's reservation.
 */
import type { Config, ModelClass } from '../config/config.ts';
import { discounted, type Micros } from '../config/money.ts';

export interface TokenRates {
  class: ModelClass;
  /** Effective micros per 1,000,000 input tokens. */
  inputPerMillion: Micros;
  outputPerMillion: Micros;
  /** List prices and the promotion they were discounted by (basis points; 0 at list price): for the breakdown. */
  listInputPerMillion: Micros;
  listOutputPerMillion: Micros;
  discountBasisPoints: number;
  /** ISO 4217 code of every amount. */
  currency: string;
}

/** Cost of a turn, rounded up to whole micros. Integer arithmetic only. */
export function costMicros(rates: Pick<TokenRates, 'inputPerMillion' | 'outputPerMillion'>, inputTokens: number, outputTokens: number): Micros {
  const scaled = inputTokens * rates.inputPerMillion + outputTokens * rates.outputPerMillion;
  return Math.ceil(scaled / 1_000_000);
}

/** Cost of what a turn consumed (every product bills as tokens at its model's rates). */
export function meteredCost(rates: TokenRates, metered: { inputTokens: number; outputTokens: number }): Micros {
  return costMicros(rates, metered.inputTokens, metered.outputTokens);
}

/** What a turn that consumed `metered` is billed: its cost, never more than it reserved. The ledger row's `cost_micros`. */
export function turnCost(turn: { model: { rates: TokenRates }; reservedMicros: Micros }, metered: { inputTokens: number; outputTokens: number }): Micros {
  return Math.min(meteredCost(turn.model.rates, metered), turn.reservedMicros);
}

/** A reply's cost as a stream's final `usage` carries it (`usage.cost`). */
export interface CostStamp {
  amount_micros: Micros;
  currency: string;
}

/** The cost of a turn whose usage is known, as `usage.cost`; null while it is not (nothing to say yet). */
export function costStamp(turn: { model: { rates: TokenRates }; reservedMicros: Micros; metered: { inputTokens: number; outputTokens: number } | null }): CostStamp | null {
  return turn.metered === null ? null : { amount_micros: turnCost(turn, turn.metered), currency: turn.model.rates.currency };
}

/** One token class of a breakdown: tokens × price per million. */
export interface PriceLine {
  tokenClass: 'input' | 'output';
  tokens: number;
  listPerMillion: Micros;
  discountBasisPoints: number;
  pricePerMillion: Micros;
  /** tokens × price / 1,000,000, exactly: whole micros and millionths of a micro. */
  subtotalMillionthsOfMicro: number;
}

/** How a cost was computed, line by line, by the same arithmetic that billed it. */
export interface PriceBreakdown {
  currency: string;
  lines: PriceLine[];
  /** The lines' sum, exactly (millionths of a micro), before rounding up. */
  exactMillionthsOfMicro: number;
  /** The sum rounded up to whole micros. */
  roundedMicros: Micros;
  /** The cost never exceeds what the request reserved (its worst case): the cap, when it applied. */
  reservedMicros: Micros;
  cappedAtReservation: boolean;
  totalMicros: Micros;
}

/** The breakdown of what `metered` costs at `rates` for a turn that reserved `reservedMicros`: `totalMicros` is `turnCost`'s. */
export function priceBreakdown(rates: TokenRates, metered: { inputTokens: number; outputTokens: number }, reservedMicros: Micros): PriceBreakdown {
  const line = (tokenClass: PriceLine['tokenClass'], tokens: number, price: Micros, list: Micros): PriceLine => ({
    tokenClass,
    tokens,
    listPerMillion: list,
    discountBasisPoints: rates.discountBasisPoints,
    pricePerMillion: price,
    subtotalMillionthsOfMicro: tokens * price,
  });
  const lines = [line('input', metered.inputTokens, rates.inputPerMillion, rates.listInputPerMillion), line('output', metered.outputTokens, rates.outputPerMillion, rates.listOutputPerMillion)];
  const roundedMicros = meteredCost(rates, metered);
  const totalMicros = turnCost({ model: { rates }, reservedMicros }, metered);
  return {
    currency: rates.currency,
    lines,
    exactMillionthsOfMicro: lines[0]!.subtotalMillionthsOfMicro + lines[1]!.subtotalMillionthsOfMicro,
    roundedMicros,
    reservedMicros,
    cappedAtReservation: totalMicros < roundedMicros,
    totalMicros,
  };
}

/** The rates a model is billed at: its list prices less the promotion for its class (0: at list price). */
function ratesFor(model: { tier: ModelClass; inputPrice: Micros; outputPrice: Micros }, discountBasisPoints: number, currency: string): TokenRates {
  return {
    class: model.tier,
    inputPerMillion: discounted(model.inputPrice, discountBasisPoints),
    outputPerMillion: discounted(model.outputPrice, discountBasisPoints),
    listInputPerMillion: model.inputPrice,
    listOutputPerMillion: model.outputPrice,
    discountBasisPoints,
    currency,
  };
}

/**
 * The rates product model `modelId` (as requested: `auto` has prices of its own) is billed at: with its
 * class's promotion, or at list price (`atList`: a turn paid from prepaid credit). Undefined for a model the
 * config does not have (any more).
 */
export function modelRates(config: Pick<Config, 'models' | 'promotion' | 'currency'>, modelId: string, atList = false): TokenRates | undefined {
  const model = config.models[modelId];
  if (!model) return undefined;
  return ratesFor({ tier: model.tier, inputPrice: model.inputPrice, outputPrice: model.outputPrice ?? 0 }, atList ? 0 : config.promotion[model.tier], config.currency);
}

/**
 * Pricing (spec §2.1, DESIGN §4): effective price = list × (1 − promotion for the class), per 1,000,000
 * tokens, in integer micro-units of the configured currency. A turn's cost rounds up to whole micros, so
 * the reservation (worst case) always covers the settled cost.
 */
import type { ModelClass } from '../config/config.ts';
import type { Micros } from '../config/money.ts';

export interface TokenRates {
  class: ModelClass;
  /** Effective micros per 1,000,000 input tokens. */
  inputPerMillion: Micros;
  outputPerMillion: Micros;
}

/** Cost of a turn, rounded up to whole micros. Integer arithmetic only. */
export function costMicros(rates: TokenRates, inputTokens: number, outputTokens: number): Micros {
  const scaled = inputTokens * rates.inputPerMillion + outputTokens * rates.outputPerMillion;
  return Math.ceil(scaled / 1_000_000);
}

/** Cost of what a turn consumed (every product bills as tokens at its model's rates). */
export function meteredCost(rates: TokenRates, metered: { inputTokens: number; outputTokens: number }): Micros {
  return costMicros(rates, metered.inputTokens, metered.outputTokens);
}

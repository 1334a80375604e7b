/**
 * How a request's cost was computed, for its page (member and staff): tokens × price per token class, the
 * promotion, the rounding up to whole micros and the cap at the reservation — made by the pricing code that
 * billed it (`metering/pricing.ts`), from the ledger row's tokens and reservation, never re-derived by a page.
 *
 * The rates are the model's as configured now (the ledger keeps the cost, not the rates). When the operator
 * has changed a price or the promotion since, the breakdown's total differs from what was charged, and says so
 * (`matchesCharge: false`); the charge stays what the ledger recorded.
 */
import type { Config } from '../../config/config.ts';
import { money, type Money } from '../../config/money.ts';
import { modelRates, priceBreakdown } from '../../metering/pricing.ts';
import type { UsageRecord } from './usage.history.ts';

export interface CostLineView {
  tokenClass: 'input' | 'output';
  tokens: number;
  listPricePerMillion: Money;
  /** The promotion, in basis points (7000 = 70 % off); 0 at list price. */
  promotionBasisPoints: number;
  pricePerMillion: Money;
  /** tokens × price ÷ 1,000,000, exactly (a decimal of the currency, down to a millionth of a micro). */
  subtotal: string;
}

export interface CostBreakdownView {
  currency: string;
  /** Paid from prepaid credit: at list price, no promotion. */
  paidFromCredit: boolean;
  lines: CostLineView[];
  /** The lines' exact sum (a decimal of the currency). */
  exact: string;
  /** The sum rounded up to whole micros. */
  rounded: Money;
  /** What the request reserved; the cost never exceeds it. */
  reserved: Money;
  cappedAtReservation: boolean;
  total: Money;
  /** The total is what the ledger charged (false only when prices changed since). */
  matchesCharge: boolean;
}

/** millionths of a micro → a decimal of the currency (1 unit = 10^12 of them), at least two fraction digits. */
function exactDecimal(millionthsOfMicro: number): string {
  const scale = 1_000_000_000_000;
  const whole = Math.floor(millionthsOfMicro / scale);
  const fraction = String(millionthsOfMicro % scale).padStart(12, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${fraction}`;
}

/** The breakdown of a ledger record's cost; null when its model is no longer configured (nothing to price it with). */
export function costBreakdown(config: Pick<Config, 'models' | 'promotion' | 'currency'>, record: UsageRecord): CostBreakdownView | null {
  const rates = modelRates(config, record.model, record.paidFromCredit);
  if (!rates) return null;
  const breakdown = priceBreakdown(rates, record, record.reserved.amountMicros);
  const amount = (micros: number) => money(micros, breakdown.currency);
  return {
    currency: breakdown.currency,
    paidFromCredit: record.paidFromCredit,
    lines: breakdown.lines.map((line) => ({
      tokenClass: line.tokenClass,
      tokens: line.tokens,
      listPricePerMillion: amount(line.listPerMillion),
      promotionBasisPoints: line.discountBasisPoints,
      pricePerMillion: amount(line.pricePerMillion),
      subtotal: exactDecimal(line.subtotalMillionthsOfMicro),
    })),
    exact: exactDecimal(breakdown.exactMillionthsOfMicro),
    rounded: amount(breakdown.roundedMicros),
    reserved: amount(breakdown.reservedMicros),
    cappedAtReservation: breakdown.cappedAtReservation,
    total: amount(breakdown.totalMicros),
    matchesCharge: breakdown.totalMicros === record.cost.amountMicros && breakdown.currency === record.cost.currency,
  };
}

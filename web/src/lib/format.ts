/** Display formats shared by every page; amounts arrive from the server already as exact decimal strings. */

export interface MoneyLike {
  amount: string;
  currency: string;
}

/** "USD 9.00": the ISO code always comes first, so no one has to guess what "$" means. */
export function formatMoney(money: MoneyLike): string {
  return `${money.currency}\u00a0${money.amount}`;
}

/** 0.7 → "−70 %" (a real minus sign, kept on one line). */
export function formatDiscount(fraction: number): string {
  return `\u2212${Math.round(fraction * 100)}\u00a0%`;
}

/** 1000000 → "1M", 1000 → "1K": prices are quoted per this many tokens. */
export function formatTokenCount(tokens: number): string {
  if (tokens % 1_000_000 === 0) return `${tokens / 1_000_000}M`;
  if (tokens % 1_000 === 0) return `${tokens / 1_000}K`;
  return tokens.toLocaleString('en-US');
}

export function formatInteger(value: number): string {
  return value.toLocaleString('en-US');
}

/** 12.5 → "12.5", 30 → "30": a measured quantity with at most `maxFractionDigits` decimals. */
export function formatDecimal(value: number, maxFractionDigits = 1): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: maxFractionDigits });
}

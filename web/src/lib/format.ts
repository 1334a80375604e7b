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

/** 1234 → "1.2K", 5600000 → "5.6M": for chart axes and tiles where the exact figure is a hover away. */
export function formatCompact(value: number): string {
  return new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 }).format(value);
}

/** A calendar date "2026-11-03" → "Nov 3" (the date as given, whatever the reader's time zone). */
export function formatDay(date: string, options: { weekday?: boolean; year?: boolean } = {}): string {
  return new Date(`${date}T12:00:00Z`).toLocaleDateString('en-US', {
    timeZone: 'UTC',
    month: 'short',
    day: 'numeric',
    ...(options.weekday ? { weekday: 'short' } : {}),
    ...(options.year ? { year: 'numeric' } : {}),
  });
}

/** 0.0213 → "2.1 %" (one decimal below 10 %, none above). */
export function formatPercent(fraction: number): string {
  const percent = fraction * 100;
  return `${percent.toLocaleString('en-US', { maximumFractionDigits: percent < 10 ? 1 : 0 })}\u00a0%`;
}

/** A short figure for any size: 1234 → "1.2K", 0.0153 → "0.015". */
export function formatCompactNumber(value: number): string {
  return value !== 0 && Math.abs(value) < 1 ? value.toLocaleString('en-US', { maximumSignificantDigits: 2 }) : formatCompact(value);
}

/** An amount as a short figure with its currency: "USD 1.2K", "USD 0.077" (tiles; tables use formatMoney). */
export function formatCompactMoney(money: MoneyLike): string {
  return `${money.currency}\u00a0${formatCompactNumber(Number(money.amount))}`;
}

/** Integer micro-units → "USD 0.042", exactly, with at least two decimals (as the server writes amounts). */
export function formatMicros(micros: number, currency: string): string {
  const whole = Math.floor(micros / 1_000_000);
  const fraction = String(micros % 1_000_000).padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return formatMoney({ amount: `${whole}.${fraction}`, currency });
}

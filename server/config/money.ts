/**
 * Money is integer micro-units of the configured currency (1 USD = 1_000_000 micros).
 * Config files write decimals ("0.14"); they are converted here once, exactly, and never
 * touched as floats again.
 */
export type Micros = number;

export const MICROS_PER_UNIT = 1_000_000;

const DECIMAL = /^(\d+)(?:\.(\d{1,6}))?$/;

/** Parses a non-negative decimal with at most six fraction digits into micros, or returns null. */
export function parseMicros(value: string | number): Micros | null {
  const text = typeof value === 'number' ? numberToPlainString(value) : value.trim();
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const whole = Number(match[1]);
  const fraction = Number((match[2] ?? '').padEnd(6, '0'));
  const micros = whole * MICROS_PER_UNIT + fraction;
  return Number.isSafeInteger(micros) ? micros : null;
}

function numberToPlainString(value: number): string {
  if (!Number.isFinite(value) || value < 0) return 'invalid';
  // toFixed(6) is exact for any number that was written with at most six decimals.
  const fixed = value.toFixed(6);
  return Number(fixed) === value ? fixed.replace(/\.?0+$/, '') : 'invalid';
}

/** Formats micros as a plain decimal string with at least two fraction digits ("0.042", "9.00"). */
export function formatMicros(micros: Micros): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_UNIT);
  const fraction = String(abs % MICROS_PER_UNIT).padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${sign}${whole}.${fraction}`;
}

export interface Money {
  /** Integer micro-units of `currency` (1 unit = 1,000,000 micros). */
  amountMicros: Micros;
  /** The same amount as a decimal string, e.g. "0.042". */
  amount: string;
  currency: string;
}

export function money(amountMicros: Micros, currency: string): Money {
  return { amountMicros, amount: formatMicros(amountMicros), currency };
}

/** Applies a discount given in basis points (7000 = 70 %) and rounds half up to whole micros. */
export function discounted(listMicros: Micros, discountBasisPoints: number): Micros {
  return Math.floor((listMicros * (10_000 - discountBasisPoints) + 5_000) / 10_000);
}

/*
 * Payments count in the currency's minor unit (cents, fen): integers, as every payment provider does.
 * How many digits a unit has comes from ISO 4217 through Intl (USD 2, CNY 2, JPY 0, BHD 3).
 */

const knownCurrencies = new Set(Intl.supportedValuesOf('currency'));

export function isCurrencyCode(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && knownCurrencies.has(code);
}

/**
 * Digits after the decimal point in `currency` (2 for USD and CNY). Kept per currency: building the
 * `Intl.NumberFormat` that knows it costs ~0.1 ms, and every amount formatted asks (the dashboard's 90 days
 * of revenue asked hundreds of times a request). Only codes Intl accepts are kept (others throw), so the
 * map holds at most ISO 4217's few hundred.
 */
const digitsByCurrency = new Map<string, number>();
export function minorDigits(currency: string): number {
  let digits = digitsByCurrency.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    digitsByCurrency.set(currency, digits);
  }
  return digits;
}

/**
 * Parses a non-negative decimal amount of `currency` into integer minor units, exactly ("65.00" → 6500,
 * "0.1" → 10), or returns null: more decimals than the currency has, signs, exponents and unsafe
 * integers are refused rather than rounded.
 */
export function parseMinor(value: string | number, currency: string): number | null {
  const digits = minorDigits(currency);
  const text = typeof value === 'number' ? numberToPlainString(value) : value;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match || (match[2] ?? '').length > digits) return null;
  const whole = Number(match[1]);
  const fraction = Number((match[2] ?? '').padEnd(digits, '0') || '0');
  const minor = whole * 10 ** digits + fraction;
  return Number.isSafeInteger(minor) ? minor : null;
}

/** Formats minor units as the provider-facing decimal string with exactly the currency's digits ("65.00"). */
export function formatMinor(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  if (digits === 0) return `${sign}${abs}`;
  const unit = 10 ** digits;
  return `${sign}${Math.floor(abs / unit)}.${String(abs % unit).padStart(digits, '0')}`;
}

/** Whole minor units as micros (config prices are micros; payments are minor units). */
export function minorToMicros(minor: number, currency: string): Micros {
  return minor * 10 ** (6 - minorDigits(currency));
}

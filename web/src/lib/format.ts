/**
 * Every number, amount of money, date and duration the web app shows goes through here: `Intl` in the
 * reader's language, never strings glued together. Components take the bound set from `useFormat()`;
 * the plain functions take the language explicitly (tests, non-React code).
 *
 *   const format = useFormat();
 *   format.money(pool.limit)            // "USD 9.00" · "USD 9.00" (zh-CN) · "¥65.00" (CNY in zh-CN)
 *   format.duration(4 * 3600_000)       // "4h" · "4小时"   → t('usage:resetsIn', { duration })
 *   format.dateTime(iso)                // "22 Nov 2026, 21:27" · "2026年11月22日 21:27"
 *   format.compact(56789)               // "56.8K" · "5.7万" (tiles, chart axes)
 */
import { useTranslation } from 'react-i18next';
import { isLanguage, type Language } from '../locales/languages.ts';

export interface MoneyLike {
  /** Exact decimal string from the server ("0.042", "9.00"): formatted as text, never through a float. */
  amount: string;
  currency: string;
}

/** The currency each language writes with its own symbol; every other currency shows its ISO code. */
const homeCurrency: Partial<Record<Language, string>> = { 'zh-CN': 'CNY' };

/** The `Intl` locale for a language: the browser's own variant of it when it has one (en-GB dates for en-GB readers). */
export function intlLocale(language: Language): string {
  const base = language.split('-')[0];
  const variant = typeof navigator === 'undefined' ? undefined : navigator.languages?.find((tag) => tag.toLowerCase().split('-')[0] === base);
  return language === 'en' && variant ? variant : language;
}

const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat | Intl.DurationFormat | Intl.ListFormat>();
function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat | Intl.DurationFormat | Intl.ListFormat>(key: string, make: () => T): T {
  let formatter = cache.get(key) as T | undefined;
  if (!formatter) {
    formatter = make();
    cache.set(key, formatter);
  }
  return formatter;
}

/**
 * "USD 9.00": the ISO code comes first, so no one has to guess what "$" means — except the reader's home
 * currency, which gets its symbol ("¥65.00" in Chinese). All of the server's digits are kept (prices
 * go down to micro-units); at least the currency's usual two.
 */
export function formatMoney(money: MoneyLike, language: Language, maximumFractionDigits = 6): string {
  const locale = intlLocale(language);
  const display = homeCurrency[language] === money.currency ? 'symbol' : 'code';
  const formatter = cached(`money|${locale}|${money.currency}|${display}|${maximumFractionDigits}`, () => {
    try {
      return new Intl.NumberFormat(locale, { style: 'currency', currency: money.currency, currencyDisplay: display, maximumFractionDigits });
    } catch {
      // A currency code Intl does not know: still show the amount, as a plain number.
      return new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits });
    }
  });
  // A decimal string is formatted exactly (Intl.NumberFormat v3), with no binary rounding on the way.
  const text = formatter.format(money.amount as unknown as number);
  return formatter.resolvedOptions().style === 'currency' ? text : `${money.currency}\u00a0${text}`;
}

/** 0.7 → "-70%": a promotion as the percentage taken off. */
export function formatDiscount(fraction: number, language: Language): string {
  const locale = intlLocale(language);
  return cached(`discount|${locale}`, () => new Intl.NumberFormat(locale, { style: 'percent', signDisplay: 'exceptZero', maximumFractionDigits: 1 })).format(-fraction);
}

/** 0.7 → "70%". */
export function formatPercent(fraction: number, language: Language): string {
  const locale = intlLocale(language);
  return cached(`percent|${locale}|1`, () => new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1 })).format(fraction);
}

/** 1000000 → "1M" / "100万": prices are quoted per this many tokens. */
export function formatTokenCount(tokens: number, language: Language): string {
  const locale = intlLocale(language);
  return cached(`compact|${locale}`, () => new Intl.NumberFormat(locale, { notation: 'compact', maximumFractionDigits: 1 })).format(tokens);
}

/**
 * A short figure for tiles and chart axes, where the exact one is a hover away: 1234 → "1.2K" / "1234",
 * 56789 → "56.8K" / "5.7万"; below 1, two significant digits (0.0153 → "0.015"), which compact notation
 * would round to 0.
 */
export function formatCompact(value: number, language: Language): string {
  const locale = intlLocale(language);
  if (value !== 0 && Math.abs(value) < 1) return cached(`small|${locale}`, () => new Intl.NumberFormat(locale, { maximumSignificantDigits: 2 })).format(value);
  return formatTokenCount(value, language);
}

/** An amount as a short figure with its currency, for tiles ("USD 1.2K", "USD 0.077", "¥5.7万"); tables use `formatMoney`. */
export function formatCompactMoney(money: MoneyLike, language: Language): string {
  const locale = intlLocale(language);
  const display = homeCurrency[language] === money.currency ? 'symbol' : 'code';
  const small = Math.abs(Number(money.amount)) < 1;
  try {
    return cached(`compact-money|${locale}|${money.currency}|${display}|${small}`, () =>
      new Intl.NumberFormat(locale, { style: 'currency', currency: money.currency, currencyDisplay: display, notation: 'compact', ...(small ? { maximumSignificantDigits: 2 } : { maximumFractionDigits: 1 }) }),
    ).format(money.amount as unknown as number);
  } catch {
    return `${money.currency}\u00a0${formatCompact(Number(money.amount), language)}`;
  }
}

/** Integer micro-units → money, exactly (0.042 USD is 42000 micros): "USD 0.042". */
export function formatMicros(micros: number, currency: string, language: Language): string {
  const sign = micros < 0 ? '-' : '';
  const magnitude = Math.abs(micros);
  const whole = Math.floor(magnitude / 1_000_000);
  const fraction = String(magnitude % 1_000_000).padStart(6, '0');
  return formatMoney({ amount: `${sign}${whole}.${fraction}`, currency }, language);
}

/**
 * A calendar day "2026-11-03" as given, whatever the reader's time zone (the dashboard's days are the
 * service's): "Nov 3" / "11月3日"; with the weekday "Tue, Nov 3" / "11月3日周二"; with the year
 * "Nov 3, 2026" / "2026年11月3日".
 */
export function formatDay(date: string, language: Language, options: { weekday?: boolean; year?: boolean } = {}): string {
  const locale = intlLocale(language);
  const key = `day|${locale}|${options.weekday ? 'w' : ''}${options.year ? 'y' : ''}`;
  return cached(key, () =>
    new Intl.DateTimeFormat(locale, { timeZone: 'UTC', month: 'short', day: 'numeric', ...(options.weekday ? { weekday: 'short' } : {}), ...(options.year ? { year: 'numeric' } : {}) }),
  ).format(new Date(`${date}T12:00:00Z`));
}

export function formatInteger(value: number, language: Language): string {
  const locale = intlLocale(language);
  return cached(`integer|${locale}`, () => new Intl.NumberFormat(locale, { maximumFractionDigits: 0 })).format(value);
}

/** 1234 → "1,234 ms" / "1,234毫秒". */
export function formatMilliseconds(ms: number, language: Language): string {
  const locale = intlLocale(language);
  return cached(`ms|${locale}`, () => new Intl.NumberFormat(locale, { style: 'unit', unit: 'millisecond', unitDisplay: 'short', maximumFractionDigits: 0 })).format(ms);
}

/** "1.24 s" / "1.24秒": how long a request took, to the hundredth of a second (at least 0.01 s when it took any time). */
export function formatSeconds(seconds: number, language: Language): string {
  const locale = intlLocale(language);
  const shown = seconds > 0 && seconds < 0.01 ? 0.01 : seconds;
  return cached(`s|${locale}`, () => new Intl.NumberFormat(locale, { style: 'unit', unit: 'second', unitDisplay: 'short', minimumFractionDigits: 2, maximumFractionDigits: 2 })).format(shown);
}

/** Share of a pool used, as people read it: "0%", "<0.1%", "12.5%", "100%". */
export function formatShare(usedMicros: number, limitMicros: number, language: Language): string {
  const locale = intlLocale(language);
  const percent = (digits: number) => cached(`percent|${locale}|${digits}`, () => new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: digits }));
  if (limitMicros <= 0) return percent(0).format(usedMicros > 0 ? 1 : 0);
  if (usedMicros === 0) return percent(0).format(0);
  const share = usedMicros / limitMicros;
  if (share < 0.001) return `<${percent(1).format(0.001)}`;
  return share >= 0.1 ? percent(0).format(Math.min(1, share)) : percent(1).format(share);
}

/** A moment in the reader's time zone: "22 Nov 2026, 21:27" / "2026年11月22日 21:27". */
export function formatDateTime(iso: string, language: Language): string {
  const locale = intlLocale(language);
  return cached(`datetime|${locale}`, () => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' })).format(new Date(iso));
}

/**
 * A moment in a given time zone, with the zone named (the usage windows follow the service's zone, not
 * the reader's): "Mon 24 Nov, 00:00 UTC" / "11月24日周一 UTC 00:00".
 */
export function formatZonedDateTime(iso: string, timeZone: string, language: Language): string {
  const locale = intlLocale(language);
  const options: Intl.DateTimeFormatOptions = { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' };
  try {
    return cached(`zoned|${locale}|${timeZone}`, () => new Intl.DateTimeFormat(locale, { ...options, timeZone })).format(new Date(iso));
  } catch {
    return cached(`zoned|${locale}|UTC`, () => new Intl.DateTimeFormat(locale, { ...options, timeZone: 'UTC' })).format(new Date(iso));
  }
}

/**
 * A length of time, coarse on purpose (pages re-render every minute, so seconds would only flicker):
 * "4h 12m" / "4小时12分钟", "2d 4h" / "2天4小时". Put it in a sentence with `t()`, e.g. "resets in {{duration}}".
 */
export function formatDuration(ms: number, language: Language): string {
  const locale = intlLocale(language);
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  const hours = Math.floor(minutes / 60);
  const parts = hours >= 48 ? { days: Math.floor(hours / 24), hours: hours % 24 } : hours > 0 ? { hours, minutes: minutes % 60 } : { minutes };
  return cached(`duration|${locale}`, () => new Intl.DurationFormat(locale, { style: 'narrow' })).format(parts);
}

/** "A, B and C" / "A、B和C". */
export function formatList(items: string[], language: Language): string {
  const locale = intlLocale(language);
  return cached(`list|${locale}`, () => new Intl.ListFormat(locale, { type: 'conjunction' })).format(items);
}

/** "A, B or C" / "A、B或C": choices, such as the same price in other currencies. */
export function formatAlternatives(items: string[], language: Language): string {
  const locale = intlLocale(language);
  return cached(`or|${locale}`, () => new Intl.ListFormat(locale, { type: 'disjunction' })).format(items);
}

export interface Formatters {
  language: Language;
  money(money: MoneyLike): string;
  /** An amount below a micro-unit kept to the digit (a cost's exact subtotals: "USD 0.000051828"). */
  exactMoney(money: MoneyLike): string;
  discount(fraction: number): string;
  percent(fraction: number): string;
  tokenCount(tokens: number): string;
  compact(value: number): string;
  compactMoney(money: MoneyLike): string;
  micros(micros: number, currency: string): string;
  day(date: string, options?: { weekday?: boolean; year?: boolean }): string;
  integer(value: number): string;
  milliseconds(ms: number): string;
  seconds(seconds: number): string;
  share(usedMicros: number, limitMicros: number): string;
  dateTime(iso: string): string;
  zonedDateTime(iso: string, timeZone: string): string;
  duration(ms: number): string;
  list(items: string[]): string;
  alternatives(items: string[]): string;
}

export function formatters(language: Language): Formatters {
  return {
    language,
    money: (money) => formatMoney(money, language),
    exactMoney: (money) => formatMoney(money, language, 12),
    discount: (fraction) => formatDiscount(fraction, language),
    percent: (fraction) => formatPercent(fraction, language),
    tokenCount: (tokens) => formatTokenCount(tokens, language),
    compact: (value) => formatCompact(value, language),
    compactMoney: (money) => formatCompactMoney(money, language),
    micros: (micros, currency) => formatMicros(micros, currency, language),
    day: (date, options) => formatDay(date, language, options),
    integer: (value) => formatInteger(value, language),
    milliseconds: (ms) => formatMilliseconds(ms, language),
    seconds: (value) => formatSeconds(value, language),
    share: (used, limit) => formatShare(used, limit, language),
    dateTime: (iso) => formatDateTime(iso, language),
    zonedDateTime: (iso, timeZone) => formatZonedDateTime(iso, timeZone, language),
    duration: (ms) => formatDuration(ms, language),
    list: (items) => formatList(items, language),
    alternatives: (items) => formatAlternatives(items, language),
  };
}

/** The formatters for the current language; components re-render when it changes. */
export function useFormat(): Formatters {
  const { i18n } = useTranslation();
  return formatters(isLanguage(i18n.language) ? i18n.language : 'en');
}


/**
 * The languages svc speaks and how a caller's language is found: a member's own choice (stored on the
 * account), the `svc_locale` cookie the web app sets for signed-out pages, the browser's
 * `Accept-Language`, or the POSIX locale of a terminal (`LC_ALL`, `LC_MESSAGES`, `LANG`). English is the
 * fallback everywhere.
 */
export const locales = ['en', 'zh-CN'] as const;
export type Locale = (typeof locales)[number];
export const defaultLocale: Locale = 'en';

/** Set by the web app when a member picks a language (or when their account has one); read before first paint. */
export const localeCookieName = 'svc_locale';

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (locales as readonly string[]).includes(value);
}

/**
 * The supported locale a language tag asks for, or null. Every Chinese tag (zh, zh-CN, zh-Hans, zh-SG, and
 * also zh-TW / zh-Hant) gets Simplified Chinese, the only Chinese svc has: closer to what the reader asked for
 * than English. Tags are case-insensitive and may use `_` (POSIX) instead of `-`.
 */
export function matchLocale(tag: string): Locale | null {
  const language = tag.trim().toLowerCase().replaceAll('_', '-').split('-')[0];
  if (language === 'zh') return 'zh-CN';
  if (language === 'en') return 'en';
  return null;
}

/** RFC 9110 `Accept-Language`: the supported language with the highest weight (earlier wins a tie). */
export function negotiateLocale(acceptLanguage: string | undefined | null): Locale | null {
  if (!acceptLanguage) return null;
  const ranges = acceptLanguage
    .slice(0, 1000)
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.split(';');
      const q = params.map((param) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(param)?.[1]).find((value) => value !== undefined);
      return { tag: tag.trim(), weight: q === undefined ? 1 : Number(q), index };
    })
    .filter((range) => range.tag && range.tag !== '*' && range.weight > 0 && Number.isFinite(range.weight))
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const range of ranges) {
    const match = matchLocale(range.tag);
    if (match) return match;
  }
  return null;
}

/** The language of an HTTP request with no account behind it: the web app's cookie, else `Accept-Language`. */
export function requestLocale(headers: { cookie?: string | undefined; 'accept-language'?: string | undefined }): Locale {
  const chosen = cookieValue(headers.cookie, localeCookieName);
  if (isLocale(chosen)) return chosen;
  return negotiateLocale(headers['accept-language']) ?? defaultLocale;
}

/**
 * The language of a terminal, as gettext picks it: `LC_ALL`, then `LC_MESSAGES`, then `LANG`
 * (`zh_CN.UTF-8` → zh-CN); when that is not the C locale, GNU `LANGUAGE` (a colon-separated list) comes
 * first. Anything unsupported, unset or `C`/`POSIX` is English.
 */
export function terminalLocale(env: Record<string, string | undefined>): Locale {
  const posix = [env.LC_ALL, env.LC_MESSAGES, env.LANG].find((value) => value !== undefined && value !== '');
  if (!posix || posix === 'C' || posix === 'POSIX' || posix.startsWith('C.')) return defaultLocale;
  for (const tag of (env.LANGUAGE ?? '').split(':')) {
    const match = tag ? matchLocale(tag) : null;
    if (match) return match;
  }
  return matchLocale(posix.split('.')[0] ?? '') ?? defaultLocale;
}

function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return null;
}

/** One value per language, e.g. the texts of an email: leaving a language out is a type error. */
export type Localized<T> = Record<Locale, T>;

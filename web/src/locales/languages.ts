/** The languages the web app speaks. No side effects: safe to import from anywhere (tests, lib/format.ts). */
export const languages = ['en', 'zh-CN'] as const;
export type Language = (typeof languages)[number];

/** Each language named in itself, as the switch shows it. */
export const languageNames: Record<Language, string> = { en: 'English', 'zh-CN': '简体中文' };

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (languages as readonly string[]).includes(value);
}

/** The language a browser tag asks for: any Chinese (zh, zh-Hans, zh-TW…) → zh-CN, any English → en. */
export function matchLanguage(tag: string): Language | null {
  const base = tag.toLowerCase().split('-')[0];
  if (base === 'zh') return 'zh-CN';
  if (base === 'en') return 'en';
  return null;
}

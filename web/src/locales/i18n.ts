/**
 * The web app's languages (i18next + react-i18next; see README.md beside this file). Every
 * `locales/<language>/<namespace>.json` is bundled, so no page waits for its text. The language is the
 * member's choice (account `locale`, mirrored in the `svc_locale` cookie so signed-out pages and the
 * server's `<html lang>` agree), else the browser's `navigator.languages`, else English.
 */
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { isLanguage, languages, matchLanguage, type Language } from './languages.ts';

export { isLanguage, languageNames, languages, type Language } from './languages.ts';

const cookieName = 'svc_locale';
const cookieMaxAge = 400 * 24 * 60 * 60;

/** The member's explicit choice on this browser, if any. */
export function chosenLanguage(): Language | null {
  const value = document.cookie
    .split(';')
    .map((part) => part.trim().split('='))
    .find(([name]) => name === cookieName)?.[1];
  return isLanguage(value) ? value : null;
}

function browserLanguage(): Language {
  for (const tag of navigator.languages ?? [navigator.language]) {
    const match = matchLanguage(tag);
    if (match) return match;
  }
  return 'en';
}

/** Remembers a choice for this browser (a year, like the account setting it mirrors). */
export function rememberLanguage(language: Language): void {
  const secure = window.location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${cookieName}=${language}; Path=/; Max-Age=${cookieMaxAge}; SameSite=Lax${secure}`;
}

type Catalogue = Record<string, unknown>;
const files = import.meta.glob<Catalogue>('./*/*.json', { eager: true, import: 'default' });

/** `{ en: { account: {…}, … }, 'zh-CN': {…} }` from the file names. */
export const resources: Record<string, Record<string, Catalogue>> = {};
for (const [path, catalogue] of Object.entries(files)) {
  const [, language, namespace] = /^\.\/([^/]+)\/([^/]+)\.json$/.exec(path) ?? [];
  if (!language || !namespace) continue;
  (resources[language] ??= {})[namespace] = catalogue;
}

export const i18n = i18next.createInstance();
void i18n.use(initReactI18next).init({
  resources,
  lng: chosenLanguage() ?? browserLanguage(),
  fallbackLng: 'en',
  supportedLngs: languages,
  // zh-CN is complete on its own (a test checks it), so never fall back through a bare "zh".
  load: 'currentOnly',
  ns: Object.keys(resources.en ?? {}),
  defaultNS: 'shell',
  // React escapes what it renders.
  interpolation: { escapeValue: false },
  initAsync: false,
  returnNull: false,
});

const applyToDocument = (language: string) => {
  document.documentElement.lang = language;
};
applyToDocument(i18n.language);
i18n.on('languageChanged', applyToDocument);

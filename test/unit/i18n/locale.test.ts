/** How svc finds a caller's language: Accept-Language, the web app's cookie, a terminal's POSIX locale. */
import { describe, expect, it } from 'vitest';
import { negotiateLocale, requestLocale, terminalLocale } from '../../../server/i18n/locale.ts';

describe('negotiateLocale (Accept-Language)', () => {
  it.each([
    ['zh-CN,zh;q=0.9,en;q=0.8', 'zh-CN'],
    ['zh', 'zh-CN'],
    ['zh-Hans-CN', 'zh-CN'],
    ['zh-TW', 'zh-CN'],
    ['en-US,en;q=0.9', 'en'],
    ['fr-FR, zh;q=0.5, en;q=0.4', 'zh-CN'],
    ['en;q=0.2, zh-CN;q=0.8', 'zh-CN'],
    ['en, zh-CN', 'en'],
    ['zh-CN;q=0, en;q=0.1', 'en'],
    ['fr, de', null],
    ['*', null],
    ['', null],
  ] as const)('%j → %s', (header, locale) => {
    expect(negotiateLocale(header)).toBe(locale);
  });
});

describe('requestLocale (signed-out pages and mail)', () => {
  it('prefers the cookie the web app set, then Accept-Language, then English', () => {
    expect(requestLocale({ cookie: 'a=1; svc_locale=en', 'accept-language': 'zh-CN' })).toBe('en');
    expect(requestLocale({ cookie: 'svc_locale=zh-CN', 'accept-language': 'en' })).toBe('zh-CN');
    expect(requestLocale({ cookie: 'svc_locale=fr', 'accept-language': 'zh' })).toBe('zh-CN');
    expect(requestLocale({})).toBe('en');
  });
});

describe('terminalLocale (the CLI)', () => {
  it.each([
    [{ LANG: 'zh_CN.UTF-8' }, 'zh-CN'],
    [{ LC_ALL: 'zh_CN.UTF-8', LANG: 'en_US.UTF-8' }, 'zh-CN'],
    [{ LC_ALL: 'en_US.UTF-8', LANG: 'zh_CN.UTF-8' }, 'en'],
    [{ LC_MESSAGES: 'zh_TW.UTF-8', LANG: 'en_US.UTF-8' }, 'zh-CN'],
    [{ LANG: 'C.UTF-8' }, 'en'],
    [{ LANG: 'C', LANGUAGE: 'zh_CN' }, 'en'],
    [{ LANG: 'en_US.UTF-8', LANGUAGE: 'zh_CN:en' }, 'zh-CN'],
    [{ LANG: 'de_DE.UTF-8' }, 'en'],
    [{}, 'en'],
  ] as const)('%j → %s', (env, locale) => {
    expect(terminalLocale(env)).toBe(locale);
  });
});

/**
 * The error-code table speaks both languages: every code's Chinese default is a real Chinese sentence
 * with the same placeholders and the same numbers as its English one, and `bilingual()` fills both
 * languages from one set of values (a pair whose placeholders differ does not compile).
 */
import { describe, expect, it } from 'vitest';
import { AppError, bilingual } from '../../../server/errors/app-error.ts';
import { errorCodes, type ErrorCode } from '../../../server/errors/codes.ts';
import { envelopeFor } from '../../../server/http/envelope.ts';

const han = /\p{Script=Han}/u;
/** The `{name}` placeholder names in a template, sorted (bilingual() fills the same pattern). */
const placeholdersOf = (template: string) => [...new Set(Array.from(template.matchAll(/\{([A-Za-z][A-Za-z0-9_]*)\}/g), (match) => match[1]!))].sort();
const numbers = (text: string) => (text.match(/\d+(?:\.\d+)?/g) ?? []).sort();
const rows = Object.entries(errorCodes) as [ErrorCode, (typeof errorCodes)[ErrorCode]][];

describe('error code table', () => {
  it.each(rows)('%s has a Chinese sentence that says what the English one says', (_code, info) => {
    expect(info.message.trim()).not.toBe('');
    expect(info.messageZh).toMatch(han);
    // A sentence, punctuated as Chinese is: it ends with a full-width stop (or ？/！).
    expect(info.messageZh).toMatch(/[。？！]$/u);
    expect(placeholdersOf(info.messageZh)).toEqual(placeholdersOf(info.message));
    // Defaults are whole sentences; values go through bilingual() where the error is thrown.
    expect(placeholdersOf(info.message)).toEqual([]);
    // Numbers the English gives (a wait of 5 seconds, a status) are in the Chinese too.
    expect(numbers(info.messageZh)).toEqual(numbers(info.message));
  });
});

describe('bilingual()', () => {
  it('fills both languages from the same values, with words that differ per language', () => {
    const message = bilingual('Your {window} pool is exhausted (used {used} of {limit} {currency}).', '您的{window}额度已用完（已用 {used} / {limit} {currency}）。', {
      window: { en: 'daily', zh: '每日' },
      used: '0.50',
      limit: '0.50',
      currency: 'USD',
    });
    expect(message).toEqual({ en: 'Your daily pool is exhausted (used 0.50 of 0.50 USD).', zh: '您的每日额度已用完（已用 0.50 / 0.50 USD）。' });
  });

  it('is what AppError and the envelope carry: message and messageZh', () => {
    const error = new AppError('rate_limited', bilingual('Too many {what}; retry in {seconds} s.', '{what}，请在 {seconds} 秒后重试。', { what: { en: 'requests', zh: '请求过于频繁' }, seconds: 7 }));
    expect(error.message).toBe('Too many requests; retry in 7 s.');
    expect(error.messageZh).toBe('请求过于频繁，请在 7 秒后重试。');
    expect(error.messageIn('zh-CN')).toBe(error.messageZh);
    const envelope = envelopeFor(error, 'mbr_test', 1);
    expect(envelope).toMatchObject({ message: error.message, messageZh: error.messageZh, error: { message: error.message } });
  });

  it('falls back to the code default in Chinese when only English was given', () => {
    const error = new AppError('not_found', 'No such thing.');
    expect(error.messageZh).toBe(errorCodes.not_found.messageZh);
    expect(new AppError('not_found').message).toBe(errorCodes.not_found.message);
  });

  it('refuses, at compile time, a pair whose placeholders differ or a call that leaves a value out', () => {
    // These lines only have to compile with the expected errors (`npm run typecheck`); at run time the
    // unknown placeholder is left as written.
    // @ts-expect-error the Chinese drops {limit}
    const dropped = bilingual('at most {limit} keys', '密钥数量已达上限');
    // @ts-expect-error the values lack {limit}
    const missing = bilingual('at most {limit} keys', '最多 {limit} 个密钥', {});
    // @ts-expect-error a value the template does not use
    const extra = bilingual('at most {limit} keys', '最多 {limit} 个密钥', { limit: 3, other: 1 });
    expect(dropped.zh).toBe('密钥数量已达上限');
    expect(missing.en).toBe('at most {limit} keys');
    expect(extra.zh).toBe('最多 3 个密钥');
  });
});

/**
 * What the enterprise module accepts from callers: an application's fields, checked all at once so a form
 * can mark every bad field, and the folded organisation name that uniqueness is decided on.
 */
import { AppError, bilingual, type Bilingual } from '../../errors/app-error.ts';
import { applicationKinds, type ApplicationKind } from './enterprise.entity.ts';

export interface ApplicationInput {
  kind?: unknown;
  organisation?: unknown;
  contactEmail?: unknown;
  website?: unknown;
  country?: unknown;
  useCase?: unknown;
  expectedMonthlyTokens?: unknown;
}

export interface ValidApplication {
  kind: ApplicationKind;
  organisation: string;
  organisationKey: string;
  contactEmail: string;
  website: string | null;
  country: string;
  useCase: string;
  expectedMonthlyTokens: number;
}

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** An address an application's contact or an invitation may name (at most 254 characters). */
export function isEmailAddress(text: string): boolean {
  return emailPattern.test(text) && text.length <= 254;
}

interface FieldError {
  param: string;
  message: string;
  messageZh: string;
}

/** The folded form of an organisation name that uniqueness is decided on. */
export function organisationKey(name: string): string {
  return name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * Checks every field and reports them all: the error names the first bad field (`param`) and lists each
 * one in `fieldErrors` (param, message, messageZh), so a form can mark every field at once.
 */
export function validateApplication(input: ApplicationInput): ValidApplication {
  const errors: FieldError[] = [];
  const fail = (param: string, message: Bilingual) => errors.push({ param, message: message.en, messageZh: message.zh });
  const text = (value: unknown) => (typeof value === 'string' ? value.normalize('NFC').trim() : '');
  const controls = (value: string) => /[\p{Cc}\p{Cf}]/u.test(value.replace(/[\n\r\t]/g, ''));

  const kind = input.kind;
  if (!applicationKinds.includes(kind as ApplicationKind)) fail('kind', bilingual('kind must be commercial or enterprise.', 'kind 必须是 commercial 或 enterprise。'));

  const organisation = text(input.organisation).replace(/\s+/g, ' ');
  if (organisation.length < 2 || organisation.length > 200) fail('organisation', bilingual('organisation: give the organisation\'s name, 2 to 200 characters.', 'organisation：请填写组织名称，2 到 200 个字符。'));
  else if (controls(organisation)) fail('organisation', bilingual('organisation must not contain control characters.', 'organisation 不能包含控制字符。'));

  const contactEmail = text(input.contactEmail).toLowerCase();
  if (!isEmailAddress(contactEmail)) fail('contactEmail', bilingual('contactEmail must be an email address, such as ops@example.com.', 'contactEmail 必须是邮箱地址，例如 ops@example.com。'));

  let website: string | null = text(input.website) || null;
  if (website !== null) {
    if (!/^https?:\/\//i.test(website)) website = `https://${website}`;
    let ok = website.length <= 500;
    try {
      const url = new URL(website);
      ok &&= (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.includes('.');
    } catch {
      ok = false;
    }
    if (!ok) fail('website', bilingual('website must be a web address, such as https://example.com (or leave it empty).', 'website 必须是网址，例如 https://example.com（也可以留空）。'));
  }

  const country = text(input.country).toUpperCase();
  if (!/^[A-Z]{2}$/.test(country) || regionNames.of(country) === country) {
    fail('country', bilingual('country must be a two-letter ISO 3166 country code, such as CN, US or DE.', 'country 必须是两位 ISO 3166 国家代码，例如 CN、US 或 DE。'));
  }

  const useCase = text(input.useCase);
  if (useCase.length < 10 || useCase.length > 5000) fail('useCase', bilingual('useCase: describe what you will use svc for, 10 to 5000 characters.', 'useCase：请描述您将如何使用 svc，10 到 5000 个字符。'));
  else if (controls(useCase)) fail('useCase', bilingual('useCase must not contain control characters.', 'useCase 不能包含控制字符。'));

  const raw = input.expectedMonthlyTokens;
  const tokens = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (typeof tokens !== 'number' || !Number.isSafeInteger(tokens) || tokens < 1 || tokens > 1e15) {
    fail('expectedMonthlyTokens', bilingual('expectedMonthlyTokens must be a whole number of tokens per month, from 1 to 10^15.', 'expectedMonthlyTokens 必须是每月的 token 数（整数），范围 1 到 10^15。'));
  }

  if (errors.length > 0) {
    const first = errors[0]!;
    const more = errors.length - 1;
    const message =
      more === 0 ? { en: first.message, zh: first.messageZh } : bilingual('{first} ({more} more fields need fixing.)', '{first}（另有 {more} 个字段需要修改。）', { first: { en: first.message, zh: first.messageZh }, more });
    throw new AppError('invalid_request', message, { param: first.param, stage: 'validation', details: { fieldErrors: errors } });
  }
  return {
    kind: kind as ApplicationKind,
    organisation,
    organisationKey: organisationKey(organisation),
    contactEmail,
    website,
    country,
    useCase,
    expectedMonthlyTokens: tokens as number,
  };
}

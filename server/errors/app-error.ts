import type { Locale } from '../i18n/locale.ts';
import { errorCodes, type ErrorCode, type ErrorStage } from './codes.ts';

/** What the envelope's `debug` object may carry. Never secrets or internal URLs (DESIGN §5). */
export interface ErrorDebug {
  productModel?: string | null;
  upstreamStatus?: number | null;
  upstreamHost?: string | null;
  quotaRefunded?: boolean;
}

export interface AppErrorOptions {
  /** The request field at fault, reported as `error.param`. */
  param?: string;
  stage?: ErrorStage;
  /** Prefer passing a `bilingual(…)` message, which keeps both languages' values in step. */
  messageZh?: string;
  debug?: ErrorDebug;
  /** The HTTP status, where a code's status varies (`upstream_rejected` answers with the upstream's own 4xx). */
  status?: number;
  /** Extra response headers, such as `Retry-After`. */
  headers?: Record<string, string>;
  /** Extra top-level envelope fields (e.g. the quota window and its reset time). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** One message in both languages the envelope carries (`message`, `messageZh`). */
export interface Bilingual {
  en: string;
  zh: string;
}

/** A placeholder's value: the same for both languages, or a word that differs (`{ en: 'daily', zh: '每日' }`). */
export type TemplateValue = string | number | Bilingual;

/** The `{name}` placeholders of a template, as a union of names. */
export type Placeholders<T extends string> = T extends `${string}{${infer Name}}${infer Rest}` ? Name | Placeholders<Rest> : never;

type SamePlaceholders<En extends string, Zh extends string> = [Placeholders<En>] extends [Placeholders<Zh>]
  ? [Placeholders<Zh>] extends [Placeholders<En>]
    ? unknown
    : { 'the Chinese template has placeholders the English one lacks': Exclude<Placeholders<Zh>, Placeholders<En>> }
  : { 'the Chinese template lacks placeholders of the English one': Exclude<Placeholders<En>, Placeholders<Zh>> };

type TemplateValues<En extends string> = [Placeholders<En>] extends [never] ? [] : [values: Record<Placeholders<En>, TemplateValue>];

const placeholderPattern = /\{([A-Za-z][A-Za-z0-9_]*)\}/g;

/**
 * An error message in English and Chinese from one pair of templates with the same `{name}` placeholders,
 * filled with the same values — so the Chinese text can never drop an amount, a limit or an id the English
 * one gives. The type checker refuses a pair whose placeholders differ, and a call without every value.
 *
 *   throw new AppError('invalid_request', bilingual(
 *     'password must be at least {min} characters.',
 *     '密码至少需要 {min} 个字符。',
 *     { min: passwordRules.minLength }), { param: 'password' });
 */
export function bilingual<const En extends string, const Zh extends string>(en: En, zh: Zh & SamePlaceholders<En, Zh>, ...values: TemplateValues<En>): Bilingual {
  const given: Record<string, TemplateValue> = values[0] ?? {};
  const fill = (template: string, language: keyof Bilingual) =>
    template.replace(placeholderPattern, (whole, name: string) => {
      const value = given[name];
      if (value === undefined) return whole;
      return typeof value === 'object' ? value[language] : String(value);
    });
  return { en: fill(en, 'en'), zh: fill(zh, 'zh') };
}

/**
 * The error every domain throws for an expected failure. Transports map it in exactly one place each
 * (REST: `http/envelope.ts`; GraphQL: `graphql-core/builder.ts`). The message is the code's default sentence,
 * a plain English string (its Chinese is then the code's default), or a `bilingual(…)` pair.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly options: AppErrorOptions;
  readonly #messageZh: string | undefined;

  constructor(code: ErrorCode, message?: string | Bilingual, options: AppErrorOptions = {}) {
    super(typeof message === 'object' ? message.en : (message ?? errorCodes[code].message), { cause: options.cause });
    this.code = code;
    this.options = options;
    this.#messageZh = typeof message === 'object' ? message.zh : options.messageZh;
  }

  get status(): number {
    return this.options.status ?? errorCodes[this.code].status;
  }

  /** The Chinese message: the specific one when the thrower gave it, else the code's default sentence. */
  get messageZh(): string {
    return this.#messageZh ?? errorCodes[this.code].messageZh;
  }

  messageIn(locale: Locale): string {
    return locale === 'zh-CN' ? this.messageZh : this.message;
  }
}

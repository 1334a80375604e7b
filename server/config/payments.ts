/**
 * `payments.*` (DESIGN §8.6): which providers take money and with which keys. Secrets are never written in
 * the YAML: they are `env:NAME` or `file:PATH` references, resolved here once at start. A provider whose
 * section is present but misses a key (or whose reference cannot be read) is off — it fails closed — and
 * says which key is missing; the rest of the service starts normally.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './config-error.ts';

type Env = Record<string, string | undefined>;

const secretMessage = 'expected a reference env:NAME or file:PATH (secrets are never written in the config file)';
/** A secret: only by reference. */
export const SecretRefModel = z.string().regex(/^(env|file):\S+$/, secretMessage);
/** Public key material: written inline (PEM or bare base64) or by reference. */
const KeyTextModel = z.string().min(1);

const AlipayModel = z.strictObject({
  appId: z.string().min(1).optional(),
  /** The merchant's PID (2088…): notices for another seller are refused. */
  sellerId: z.string().min(1).optional(),
  /** The application private key (PKCS#1 or PKCS#8, PEM or bare base64). */
  privateKey: SecretRefModel.optional(),
  alipayPublicKey: KeyTextModel.optional(),
  gateway: z.url().default('https://openapi.alipay.com/gateway.do'),
});

const WechatModel = z.strictObject({
  mchId: z.string().min(1).optional(),
  appId: z.string().min(1).optional(),
  /** The 32-character APIv3 key that encrypts notification resources. */
  apiV3Key: SecretRefModel.optional(),
  /** Serial number of the merchant API certificate whose private key signs our requests. */
  merchantSerialNo: z.string().min(1).optional(),
  privateKey: SecretRefModel.optional(),
  /** WeChat Pay platform public key mode: the key and its id `PUB_KEY_ID_…`. */
  platformPublicKey: KeyTextModel.optional(),
  platformPublicKeyId: z.string().regex(/^PUB_KEY_ID_\w+$/, 'expected an id starting with PUB_KEY_ID_').optional(),
  /** Platform certificate mode (older merchants; both modes may be configured while migrating). */
  platformCertificates: z.array(KeyTextModel).default([]),
  baseUrl: z.url().default('https://api.mch.weixin.qq.com'),
});

const StripeModel = z.strictObject({
  secretKey: SecretRefModel.optional(),
  /** The endpoint's signing secret `whsec_…`. */
  webhookSecret: SecretRefModel.optional(),
  apiBase: z.url().default('https://api.stripe.com'),
});

export const PaymentsModel = z.strictObject({
  alipay: AlipayModel.optional(),
  wechat: WechatModel.optional(),
  stripe: StripeModel.optional(),
  sandbox: z
    .strictObject({
      /** Unset: on only when no real provider is configured and the service is not in production. */
      enabled: z.boolean().optional(),
    })
    .prefault({}),
  /** Orders left unpaid this long expire (after the provider is asked once more). Stripe needs ≥ 30 min. */
  orderTtlMinutes: z.number().int().min(30).max(24 * 60).default(120),
  /** Notices that fail verification (their digest, headers and first KiB) are deleted after this many days. */
  unverifiedRetentionDays: z.number().int().min(1).max(3650).default(7),
  /** Unverified notices stored per provider per minute, across instances; more are answered but not stored. */
  unverifiedPerMinute: z.number().int().positive().max(100_000).default(60),
});

export type PaymentsFileConfig = z.infer<typeof PaymentsModel>;

export interface AlipaySettings {
  appId: string;
  sellerId: string;
  privateKey: string;
  alipayPublicKey: string;
  gateway: string;
}

export interface WechatSettings {
  mchId: string;
  appId: string;
  apiV3Key: string;
  merchantSerialNo: string;
  privateKey: string;
  platformPublicKey: { id: string; key: string } | null;
  platformCertificates: string[];
  baseUrl: string;
}

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  apiBase: string;
}

export type ProviderSetting<T> = { enabled: true; settings: T } | { enabled: false; reason: string };

export interface Payments {
  alipay: ProviderSetting<AlipaySettings>;
  wechat: ProviderSetting<WechatSettings>;
  stripe: ProviderSetting<StripeSettings>;
  sandbox: ProviderSetting<Record<string, never>>;
  orderTtlMinutes: number;
  unverifiedRetentionDays: number;
  unverifiedPerMinute: number;
}

/** Thrown inside resolution when a key is missing or unreadable; becomes the provider's `reason`. */
class MissingKey extends Error {}

export function resolvePayments(input: PaymentsFileConfig, env: Env, production: boolean): Payments {
  const read = (key: string, value: string | undefined): string => {
    if (value === undefined || value === '') throw new MissingKey(`${key} is missing`);
    return readReference(key, value, env);
  };
  const alipay = section('payments.alipay', input.alipay, (a) => ({
    appId: read('payments.alipay.appId', a.appId),
    sellerId: read('payments.alipay.sellerId', a.sellerId),
    privateKey: read('payments.alipay.privateKey', a.privateKey),
    alipayPublicKey: read('payments.alipay.alipayPublicKey', a.alipayPublicKey),
    gateway: a.gateway,
  }));
  const wechat = section('payments.wechat', input.wechat, (w) => {
    const apiV3Key = read('payments.wechat.apiV3Key', w.apiV3Key);
    if (Buffer.byteLength(apiV3Key) !== 32) throw new MissingKey('payments.wechat.apiV3Key must be 32 bytes long');
    let platformPublicKey: WechatSettings['platformPublicKey'] = null;
    if (w.platformPublicKey !== undefined || w.platformPublicKeyId !== undefined) {
      platformPublicKey = {
        key: read('payments.wechat.platformPublicKey', w.platformPublicKey),
        id: read('payments.wechat.platformPublicKeyId', w.platformPublicKeyId),
      };
    }
    const platformCertificates = w.platformCertificates.map((value, index) => read(`payments.wechat.platformCertificates.${index}`, value));
    if (!platformPublicKey && platformCertificates.length === 0) {
      throw new MissingKey('payments.wechat.platformPublicKey (with platformPublicKeyId) or payments.wechat.platformCertificates is missing');
    }
    return {
      mchId: read('payments.wechat.mchId', w.mchId),
      appId: read('payments.wechat.appId', w.appId),
      apiV3Key,
      merchantSerialNo: read('payments.wechat.merchantSerialNo', w.merchantSerialNo),
      privateKey: read('payments.wechat.privateKey', w.privateKey),
      platformPublicKey,
      platformCertificates,
      baseUrl: w.baseUrl.replace(/\/+$/, ''),
    };
  });
  const stripe = section('payments.stripe', input.stripe, (s) => ({
    secretKey: read('payments.stripe.secretKey', s.secretKey),
    webhookSecret: read('payments.stripe.webhookSecret', s.webhookSecret),
    apiBase: s.apiBase.replace(/\/+$/, ''),
  }));
  const realConfigured = input.alipay !== undefined || input.wechat !== undefined || input.stripe !== undefined;
  if (input.sandbox.enabled === true && production) {
    throw new ConfigError('invalid config at payments.sandbox.enabled: the sandbox pays without money and cannot be on in production');
  }
  const sandboxOn = input.sandbox.enabled ?? (!production && !realConfigured);
  const sandbox: Payments['sandbox'] = sandboxOn
    ? { enabled: true, settings: {} }
    : {
        enabled: false,
        reason: production
          ? 'the sandbox is never on in production'
          : input.sandbox.enabled === false
            ? 'payments.sandbox.enabled is false'
            : 'a real payment provider is configured (set payments.sandbox.enabled: true to keep the sandbox)',
      };
  return {
    alipay,
    wechat,
    stripe,
    sandbox,
    orderTtlMinutes: input.orderTtlMinutes,
    unverifiedRetentionDays: input.unverifiedRetentionDays,
    unverifiedPerMinute: input.unverifiedPerMinute,
  };
}

function section<I, T>(key: string, input: I | undefined, build: (input: I) => T): ProviderSetting<T> {
  if (input === undefined) return { enabled: false, reason: `${key} is not configured` };
  try {
    return { enabled: true, settings: build(input) };
  } catch (error) {
    if (error instanceof MissingKey) return { enabled: false, reason: error.message };
    throw error;
  }
}

/** `env:NAME` → the variable, `file:PATH` → the file's text, anything else is the value itself. */
export function readReference(key: string, value: string, env: Env): string {
  if (value.startsWith('env:')) {
    const name = value.slice(4);
    const text = env[name];
    if (text === undefined || text === '') throw new MissingKey(`${key}: environment variable ${name} is not set`);
    // PEM keys pasted into one-line variables often carry literal \n.
    return text.includes('-----BEGIN') ? text.replaceAll('\\n', '\n').trim() : text.trim();
  }
  if (value.startsWith('file:')) {
    const path = value.slice(5);
    try {
      return readFileSync(resolve(path), 'utf8').trim();
    } catch (error) {
      throw new MissingKey(`${key}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  return value.trim();
}

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { ConfigError, parseConfig } from '../../../server/config/config.ts';
import { formatMinor, minorDigits, parseMinor } from '../../../server/config/money.ts';

const wechatComplete = {
  mchId: '1900000001',
  appId: 'wx0000000000000001',
  apiV3Key: 'env:V3',
  merchantSerialNo: 'ABC',
  privateKey: 'env:WX_KEY',
  platformPublicKey: 'MIIB',
  platformPublicKeyId: 'PUB_KEY_ID_0001',
};

describe('payments config', () => {
  it('by default no real provider is on and the sandbox is, outside production', () => {
    const { payments } = parseConfig({});
    expect(payments.alipay).toEqual({ enabled: false, reason: 'payments.alipay is not configured' });
    expect(payments.wechat.enabled).toBe(false);
    expect(payments.stripe.enabled).toBe(false);
    expect(payments.sandbox.enabled).toBe(true);
    expect(payments.orderTtlMinutes).toBe(120);
    expect(payments.unverifiedRetentionDays).toBe(7);
    expect(payments.unverifiedPerMinute).toBe(60);
  });

  it('production mode (NODE_ENV=production or server.production) never runs the sandbox', () => {
    expect(parseConfig({}, { NODE_ENV: 'production' }).payments.sandbox).toEqual({ enabled: false, reason: 'the sandbox is never on in production' });
    expect(parseConfig({ server: { production: true } }).payments.sandbox.enabled).toBe(false);
    expect(() => parseConfig({ payments: { sandbox: { enabled: true } } }, { NODE_ENV: 'production' })).toThrow('payments.sandbox.enabled');
  });

  it('a configured real provider turns the sandbox off unless asked for, even when its keys are missing', () => {
    expect(parseConfig({ payments: { stripe: {} } }).payments.sandbox.enabled).toBe(false);
    expect(parseConfig({ payments: { stripe: {}, sandbox: { enabled: true } } }).payments.sandbox.enabled).toBe(true);
  });

  it('secrets written into the file are refused, naming the key', () => {
    expect(() => parseConfig({ payments: { stripe: { secretKey: 'sk_live_123' } } })).toThrow(ConfigError);
    expect(() => parseConfig({ payments: { stripe: { secretKey: 'sk_live_123' } } })).toThrow('payments.stripe.secretKey');
    expect(() => parseConfig({ payments: { wechat: { ...wechatComplete, apiV3Key: '0123456789abcdef0123456789abcdef' } } })).toThrow('payments.wechat.apiV3Key');
  });

  it('env: and file: references are resolved once, at start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pay-'));
    writeFileSync(join(dir, 'whsec'), 'whsec_from_file\n');
    const { payments } = parseConfig(
      { payments: { stripe: { secretKey: 'env:STRIPE_SECRET', webhookSecret: `file:${join(dir, 'whsec')}`, apiBase: 'http://127.0.0.1:9/' } } },
      { STRIPE_SECRET: 'sk_test_abc' },
    );
    expect(payments.stripe).toEqual({ enabled: true, settings: { secretKey: 'sk_test_abc', webhookSecret: 'whsec_from_file', apiBase: 'http://127.0.0.1:9' } });
  });

  it('a PEM pasted into one environment line with literal \\n is restored', () => {
    const { payments } = parseConfig(
      { payments: { alipay: { appId: '2021', sellerId: '2088', privateKey: 'env:ALI', alipayPublicKey: 'MIIB' } } },
      { ALI: '-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----' },
    );
    expect(payments.alipay.enabled && payments.alipay.settings.privateKey).toBe('-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----');
  });

  it.each([
    [{ alipay: { sellerId: '2088', privateKey: 'env:A', alipayPublicKey: 'MIIB' } }, { A: 'k' }, 'alipay', 'payments.alipay.appId is missing'],
    [{ alipay: { appId: '2021', privateKey: 'env:A', alipayPublicKey: 'MIIB' } }, { A: 'k' }, 'alipay', 'payments.alipay.sellerId is missing'],
    [{ alipay: { appId: '2021', sellerId: '2088', privateKey: 'env:A', alipayPublicKey: 'MIIB' } }, {}, 'alipay', 'payments.alipay.privateKey: environment variable A is not set'],
    [{ alipay: { appId: '2021', sellerId: '2088', privateKey: 'file:/nonexistent/key.pem', alipayPublicKey: 'MIIB' } }, {}, 'alipay', 'payments.alipay.privateKey: cannot read /nonexistent/key.pem: ENOENT'],
    [{ wechat: wechatComplete }, { WX_KEY: 'k', V3: 'short' }, 'wechat', 'payments.wechat.apiV3Key must be 32 bytes long'],
    [{ wechat: { ...wechatComplete, platformPublicKey: undefined, platformPublicKeyId: undefined } }, { WX_KEY: 'k', V3: 'x'.repeat(32) }, 'wechat', 'payments.wechat.platformPublicKey (with platformPublicKeyId) or payments.wechat.platformCertificates is missing'],
    [{ wechat: { ...wechatComplete, platformPublicKeyId: undefined } }, { WX_KEY: 'k', V3: 'x'.repeat(32) }, 'wechat', 'payments.wechat.platformPublicKeyId is missing'],
    [{ stripe: { secretKey: 'env:S' } }, { S: 'sk' }, 'stripe', 'payments.stripe.webhookSecret is missing'],
  ] as const)('%j is off: %s', (payments, env, provider, reason) => {
    const resolved = parseConfig({ payments }, env).payments[provider];
    expect(resolved).toEqual({ enabled: false, reason });
  });

  it('a complete WeChat Pay section is on', () => {
    expect(parseConfig({ payments: { wechat: wechatComplete } }, { WX_KEY: 'k', V3: 'x'.repeat(32) }).payments.wechat.enabled).toBe(true);
  });

  it('Stripe sessions need at least 30 minutes: a shorter order lifetime is refused', () => {
    expect(() => parseConfig({ payments: { orderTtlMinutes: 10 } })).toThrow('payments.orderTtlMinutes');
  });

  it.each([
    [{ unverifiedRetentionDays: 0 }, 'payments.unverifiedRetentionDays'],
    [{ unverifiedRetentionDays: 1.5 }, 'payments.unverifiedRetentionDays'],
    [{ unverifiedPerMinute: 0 }, 'payments.unverifiedPerMinute'],
  ])('%j is refused naming the key', (payments, key) => {
    expect(() => parseConfig({ payments })).toThrow(`invalid config at ${key}`);
  });
});

describe('package prices', () => {
  const withPrices = (prices: unknown) => ({
    plans: { ...defaultPlans, pro: { ...defaultPlans.pro, packages: [{ id: 'pro', name: 'Pro', price: 9, prices, multiplier: 1 }] } },
  });

  it('defaults: Pro 9 USD / 65 CNY, Max x5 19 / 138, Max x20 39 / 283, all in minor units; Free has none', () => {
    const plans = parseConfig({}).plans;
    expect(plans.pro.packages[0]!.prices).toEqual({ USD: 900, CNY: 6500 });
    expect(plans.max.packages.map((pkg) => pkg.prices)).toEqual([{ USD: 1900, CNY: 13_800 }, { USD: 3900, CNY: 28_300 }]);
    expect(plans.free.packages[0]!.prices).toEqual({});
  });

  it.each([
    [{ XYZ: 9 }, 'plans.pro.packages.0.prices.XYZ'],
    [{ usd: 9 }, 'plans.pro.packages.0.prices.usd'],
    [{ USD: 9, CNY: 65.001 }, 'plans.pro.packages.0.prices.CNY'],
    [{ USD: 9, JPY: 1000.5 }, 'plans.pro.packages.0.prices.JPY'],
    [{ USD: 9, CNY: 0 }, 'plans.pro.packages.0.prices.CNY'],
    [{ USD: 9, CNY: '6.5e1' }, 'plans.pro.packages.0.prices.CNY'],
    [{ USD: 10 }, 'plans.pro.packages.0.prices.USD: differs from price'],
  ])('%j is refused at %s', (prices, key) => {
    expect(() => parseConfig(withPrices(prices))).toThrow(key);
  });

  it('currencies without minor units stay whole', () => {
    expect(parseConfig(withPrices({ USD: 9, JPY: 1400, CNY: '65.50' })).plans.pro.packages[0]!.prices).toEqual({ USD: 900, JPY: 1400, CNY: 6550 });
  });
});

describe('minor units', () => {
  it.each([
    ['65.00', 'CNY', 6500],
    ['65', 'CNY', 6500],
    ['0.01', 'CNY', 1],
    ['0.1', 'USD', 10],
    ['1000', 'JPY', 1000],
    ['1.234', 'BHD', 1234],
    ['65.001', 'CNY', null],
    ['1.5', 'JPY', null],
    ['-1', 'USD', null],
    ['1e3', 'USD', null],
    [' 1', 'USD', null],
    ['99999999999999999', 'USD', null],
  ] as const)('%s %s → %s', (text, currency, minor) => {
    expect(parseMinor(text, currency)).toBe(minor);
  });

  it('formats with exactly the currency’s digits', () => {
    expect(formatMinor(6500, 'CNY')).toBe('65.00');
    expect(formatMinor(5, 'USD')).toBe('0.05');
    expect(formatMinor(1400, 'JPY')).toBe('1400');
    expect(formatMinor(1234, 'BHD')).toBe('1.234');
    expect(minorDigits('CNY')).toBe(2);
  });

  it('floats never sneak in: 0.1 + 0.2 is not an amount', () => {
    expect(parseMinor(0.1 + 0.2, 'USD')).toBeNull();
    expect(parseMinor(65, 'CNY')).toBe(6500);
  });
});

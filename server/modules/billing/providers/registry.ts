/**
 * The payment providers this instance runs, built once from `config.payments`. A provider is on only
 * when every key it needs is present and readable; otherwise it is off with a reason naming the key,
 * and checkout and notifications for it fail closed.
 */
import type { Config } from '../../../config/config.ts';
import type { ProviderSetting } from '../../../config/payments.ts';
import { AppError } from '../../../errors/app-error.ts';
import { AlipayProvider } from './alipay.provider.ts';
import { KeyFormatError } from './keys.ts';
import { paymentProviderIds, type PaymentProvider, type PaymentProviderId } from './provider.ts';
import { SandboxProvider } from './sandbox.provider.ts';
import { StripeProvider } from './stripe.provider.ts';
import { WechatProvider } from './wechat.provider.ts';

export interface ProviderStatus {
  id: PaymentProviderId;
  enabled: boolean;
  /** Why it is off (e.g. "payments.alipay.privateKey is missing"); null when on. */
  reason: string | null;
}

/** Where a provider posts its notifications (register this URL with the provider). */
export function notifyUrl(config: Config, id: PaymentProviderId): string {
  return `${config.server.baseUrl}/api/membership/payments/${id}/notify`;
}

export class PaymentProviders {
  readonly #providers = new Map<PaymentProviderId, PaymentProvider>();
  readonly #reasons = new Map<PaymentProviderId, string>();

  constructor(config: Config) {
    const payments = config.payments;
    this.#add('alipay', payments.alipay, (settings) => new AlipayProvider(settings, { notifyUrl: notifyUrl(config, 'alipay') }));
    this.#add('wechat', payments.wechat, (settings) => new WechatProvider(settings, { notifyUrl: notifyUrl(config, 'wechat') }));
    this.#add('stripe', payments.stripe, (settings) => new StripeProvider(settings));
    this.#add('sandbox', payments.sandbox, () => new SandboxProvider({ webUrl: config.server.webUrl }));
  }

  get(id: PaymentProviderId): PaymentProvider | null {
    return this.#providers.get(id) ?? null;
  }

  /** The provider, or `payment_provider_unavailable` saying why it is off. */
  require(id: PaymentProviderId): PaymentProvider {
    const provider = this.#providers.get(id);
    if (!provider) {
      throw new AppError('payment_provider_unavailable', `Payment provider ${id} is off: ${this.#reasons.get(id) ?? 'not configured'}.`, {
        param: 'provider',
      });
    }
    return provider;
  }

  /** The sandbox when it is on (its pay page signs notices through it). */
  get sandbox(): SandboxProvider | null {
    const provider = this.#providers.get('sandbox');
    return provider instanceof SandboxProvider ? provider : null;
  }

  status(): ProviderStatus[] {
    return paymentProviderIds.map((id) => ({ id, enabled: this.#providers.has(id), reason: this.#reasons.get(id) ?? null }));
  }

  #add<T>(id: PaymentProviderId, setting: ProviderSetting<T>, build: (settings: T) => PaymentProvider): void {
    if (!setting.enabled) {
      this.#reasons.set(id, setting.reason);
      return;
    }
    try {
      this.#providers.set(id, build(setting.settings));
    } catch (error) {
      if (!(error instanceof KeyFormatError)) throw error;
      this.#reasons.set(id, error.message);
    }
  }
}

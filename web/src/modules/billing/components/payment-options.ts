import type { PackagePriceFragment } from '../../plan/graphql/plan-package.fragment.ts';
import type { PaymentProviderId } from '../graphql/order.fragment.ts';
import type { PaymentMethodFragment } from '../graphql/payment-providers.query.ts';
import { providerOrder } from './labels.ts';

export interface PaymentOption {
  provider: PaymentProviderId;
  price: PackagePriceFragment;
}

/**
 * Every way to pay for a package here: each enabled provider once per currency it charges in and the
 * package has a price in (Alipay and WeChat Pay in CNY, Stripe in USD, the sandbox in every currency).
 */
export function paymentOptions(prices: PackagePriceFragment[], providers: PaymentMethodFragment[]): PaymentOption[] {
  const options: PaymentOption[] = [];
  const ordered = providers.filter((provider) => provider.enabled).sort((a, b) => providerOrder.indexOf(a.id) - providerOrder.indexOf(b.id));
  for (const provider of ordered) {
    for (const price of prices) {
      if (provider.currencies === null || provider.currencies.includes(price.currency)) options.push({ provider: provider.id, price });
    }
  }
  return options;
}

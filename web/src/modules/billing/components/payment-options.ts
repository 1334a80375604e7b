import type { MoneyFragment } from '../../money/graphql/money.fragment.ts';
import type { PaymentProviderId } from '../graphql/order.fragment.ts';
import type { PaymentProviderFragment } from '../graphql/payment-providers.query.ts';
import { providerOrder } from './labels.ts';

export interface PaymentOption {
  provider: PaymentProviderId;
  price: MoneyFragment;
}

/**
 * Every way to pay for a package here: each enabled provider once per currency it charges in and the
 * package has a price in (Alipay and WeChat Pay in CNY, Stripe in USD, the sandbox in every currency).
 */
export function paymentOptions(prices: MoneyFragment[], providers: PaymentProviderFragment[]): PaymentOption[] {
  const options: PaymentOption[] = [];
  const ordered = [...providers].sort((a, b) => providerOrder.indexOf(a.id) - providerOrder.indexOf(b.id));
  for (const provider of ordered) {
    for (const price of prices) {
      if (provider.currencies === null || provider.currencies.includes(price.currency)) options.push({ provider: provider.id, price });
    }
  }
  return options;
}

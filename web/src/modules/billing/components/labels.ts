import { useTranslation } from 'react-i18next';
import type { OrderState, PaymentProviderId } from '../graphql/order.fragment.ts';

export const providerOrder: readonly PaymentProviderId[] = ['alipay', 'wechat', 'stripe', 'sandbox'];

/** Providers and order states named in the reader's language. */
export function useBillingText() {
  const { t } = useTranslation('billing');
  return {
    providerName: (provider: PaymentProviderId | string) =>
      (providerOrder as readonly string[]).includes(provider) ? t(`provider.${provider as PaymentProviderId}.name`) : provider,
    stateLabel: (state: OrderState | string) =>
      ['created', 'paid', 'failed', 'expired', 'refunded'].includes(state) ? t(`state.${state as OrderState}`) : state,
  };
}

/** A state badge, coloured by outcome. */
export function stateTone(state: string): 'success' | 'danger' | 'muted' | 'pending' {
  return state === 'paid' ? 'success' : state === 'failed' ? 'danger' : state === 'created' ? 'pending' : 'muted';
}

import { useTranslation } from 'react-i18next';
import { orderStates, type OrderState, type PaymentProviderId } from '../graphql/order.fragment.ts';

export const providerOrder: readonly PaymentProviderId[] = ['alipay', 'wechat', 'stripe', 'sandbox'];

/** Providers and order states named in the reader's language. */
export function useBillingText() {
  const { t } = useTranslation('billing');
  return {
    providerName: (provider: PaymentProviderId | string) =>
      (providerOrder as readonly string[]).includes(provider) ? t(`provider.${provider as PaymentProviderId}.name`) : provider,
    stateLabel: (state: OrderState | string) =>
      (orderStates as readonly string[]).includes(state) ? t(`state.${state as OrderState}`) : state,
  };
}

/** A state badge, coloured by outcome. */
export function stateTone(state: string): 'success' | 'danger' | 'muted' | 'pending' {
  return state === 'paid' ? 'success' : state === 'failed' || state === 'refund_failed' ? 'danger' : state === 'created' || state === 'refund_pending' ? 'pending' : 'muted';
}

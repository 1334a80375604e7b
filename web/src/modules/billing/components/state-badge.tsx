import { useBillingText, stateTone } from './labels.ts';

export function StateBadge({ state }: { state: string }) {
  const text = useBillingText();
  return (
    <span className={`order-state order-state--${stateTone(state)}`} data-testid="order-state" data-state={state}>
      {text.stateLabel(state)}
    </span>
  );
}

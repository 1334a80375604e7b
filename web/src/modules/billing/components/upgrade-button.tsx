/**
 * "Upgrade to Pro": opens a dialog that lists every way to pay for the package on this server — each
 * provider with its price in its own currency (Alipay and WeChat Pay in CNY, card in USD, the sandbox
 * when it is on) — opens the order (`checkout`) and goes to `/checkout/<order>`. Signed out, it leads to
 * the account page instead. With `organisationId` the organisation pays (its owner or an admin buys for
 * it): the same dialog, quote and checkout page, priced against the organisation's own term.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { useErrorMessage } from '../../../lib/error-message.ts';
import { useFormat } from '../../../lib/format.ts';
import { useModal } from '../../shell/hooks/use-modal.ts';
import type { PackagePriceFragment } from '../../plan/graphql/plan-package.fragment.ts';
import { CHECKOUT } from '../graphql/checkout.mutation.ts';
import { CHECKOUT_QUOTE_QUERY } from '../graphql/checkout-quote.query.ts';
import { SUBSCRIPTION_QUERY } from '../graphql/subscription.query.ts';
import { usePaymentProviders } from '../hooks/use-payment-providers.ts';
import { useBillingText } from './labels.ts';
import { minorAmount } from './minor.ts';
import { paymentOptions } from './payment-options.ts';
import './billing.css';

export interface UpgradeTarget {
  packageId: string;
  /** The package as people know it ("Pro", "Max x5"). */
  name: string;
  prices: PackagePriceFragment[];
}

export type UpgradeKind = 'upgrade' | 'switch' | 'renew';

export function UpgradeButton({
  target,
  kind = 'upgrade',
  signedIn,
  className,
  organisationId = null,
}: {
  target: UpgradeTarget;
  kind?: UpgradeKind;
  signedIn: boolean;
  className?: string;
  /** The organisation that pays; null: the member's own account. */
  organisationId?: string | null;
}) {
  const { t } = useTranslation('billing');
  const [open, setOpen] = useState(false);
  const label = t(`upgrade.button.${kind}`, { plan: target.name });
  if (!signedIn) {
    return (
      <Link to="/account" className={className ?? 'button'} data-upgrade={target.packageId}>
        {label}
      </Link>
    );
  }
  return (
    <>
      <button type="button" className={className ?? 'button'} onClick={() => setOpen(true)} data-upgrade={target.packageId}>
        {label}
      </button>
      {open && <UpgradeDialog target={target} kind={kind} organisationId={organisationId} onClose={() => setOpen(false)} />}
    </>
  );
}

function UpgradeDialog({ target, kind, organisationId, onClose }: { target: UpgradeTarget; kind: UpgradeKind; organisationId: string | null; onClose(): void }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const text = useBillingText();
  const errorMessage = useErrorMessage();
  const navigate = useNavigate();
  const id = useId();
  const dialog = useModal();
  const { providers, error } = usePaymentProviders();
  const { data: term } = useQuery(SUBSCRIPTION_QUERY, { variables: { organisationId }, fetchPolicy: 'cache-and-network' });
  // A running period fixes the currency: upgrades and renewals are paid in the one it was paid in.
  const running = term?.subscription && term.subscription.state !== 'expired' && Date.parse(term.subscription.currentPeriodEnd) > Date.now() ? term.subscription : null;
  const prices = running ? target.prices.filter((price) => price.currency === running.currency) : target.prices;
  const options = providers && term !== undefined ? paymentOptions(prices, providers) : undefined;
  const [choice, setChoice] = useState<number>(0);
  const [checkout, state] = useMutation(CHECKOUT);
  const [problem, setProblem] = useState<unknown>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const option = options?.[choice];
    if (!option) return;
    setProblem(null);
    try {
      const { data } = await checkout({ variables: { packageId: target.packageId, provider: option.provider, currency: option.price.currency, organisationId } });
      if (data) await navigate(`/checkout/${encodeURIComponent(data.checkout.order.id)}`);
    } catch (caught) {
      setProblem(caught);
    }
  };

  return (
    <dialog
      ref={dialog}
      className="action-dialog upgrade-dialog"
      aria-labelledby={`${id}-title`}
      onCancel={(event) => {
        event.preventDefault();
        if (!state.loading) onClose();
      }}
    >
      <form className="action-dialog__form" onSubmit={(event) => void submit(event)}>
        <h2 id={`${id}-title`}>{t(`upgrade.title.${kind}`, { plan: target.name })}</h2>
        <p className="action-dialog__body">{t(`upgrade.body.${kind}`, { plan: target.name })}</p>
        {error ? (
          <p className="form__error" role="alert">
            {errorMessage(error)}
          </p>
        ) : !options ? (
          <p className="muted" role="status">
            {t('upgrade.loadingProviders')}
          </p>
        ) : options.length === 0 ? (
          <p className="state state--empty" role="status">
            {t('upgrade.noProviders')}
          </p>
        ) : (
          <fieldset className="pay-options">
            <legend>{t('upgrade.choose')}</legend>
            {options.map((option, index) => (
              <label key={`${option.provider}-${option.price.currency}`} className="pay-option" data-provider={option.provider} data-currency={option.price.currency}>
                <input type="radio" name={`${id}-option`} checked={choice === index} onChange={() => setChoice(index)} />
                <span className="pay-option__name">
                  {text.providerName(option.provider)}
                  <span className="pay-option__note">{t(`provider.${option.provider}.note`)}</span>
                </span>
                <span className="pay-option__price">{format.money(option.price)}</span>
              </label>
            ))}
          </fieldset>
        )}
        {running && options && <p className="muted pay-options__fine">{t('upgrade.currencyLocked', { currency: running.currency })}</p>}
        {options?.[choice] && <Quote packageId={target.packageId} currency={options[choice].price.currency} organisationId={organisationId} />}
        {options && options.length > 0 && <p className="muted pay-options__fine">{t(`upgrade.fine.${kind}`)}</p>}
        {problem !== null && (
          <p className="form__error" role="alert">
            {errorMessage(problem)}
          </p>
        )}
        <div className="action-dialog__buttons">
          <button type="button" className="button button--ghost" onClick={onClose} disabled={state.loading}>
            {t('upgrade.cancel')}
          </button>
          <button type="submit" className="button" disabled={state.loading || !options || options.length === 0}>
            {state.loading ? t('upgrade.opening') : t('upgrade.continue')}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** What the order will charge now, as the server computes it (credit for the unused period included). */
function Quote({ packageId, currency, organisationId }: { packageId: string; currency: string; organisationId: string | null }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const errorMessage = useErrorMessage();
  const { data, error } = useQuery(CHECKOUT_QUOTE_QUERY, { variables: { packageId, currency, organisationId }, fetchPolicy: 'network-only' });
  if (error) {
    return (
      <p className="form__error" role="alert">
        {errorMessage(error)}
      </p>
    );
  }
  const quote = data?.checkoutQuote;
  if (!quote) return null;
  const money = (amount: string) => format.money({ amount, currency: quote.currency });
  return (
    <div className="quote" data-testid="quote" data-kind={quote.kind}>
      <p className="quote__due">{t('upgrade.quote.due', { amount: money(quote.amountDue) })}</p>
      {quote.creditMinor > 0 && (
        <p className="muted">
          {t('upgrade.quote.credit', { list: money(minorAmount(quote.listMinor, quote.currency)), credit: money(minorAmount(quote.creditMinor, quote.currency)) })}
        </p>
      )}
      {quote.kind === 'downgrade' || quote.kind === 'extend' ? <p className="muted">{t('upgrade.quote.startsAt', { date: format.dateTime(quote.startsAt) })}</p> : null}
    </div>
  );
}

/**
 * `/account/credits`: the member's prepaid credit — the balance (live: `creditUpdated`), the entries that
 * make it up, buying credit through the checkout (an offered amount or a custom one), redeeming a code,
 * and the opt-in to pay from credit once a pool is exhausted.
 *
 * `/account/credits?org=<id>`: the same for an organisation its owner or an admin manages (the console
 * links here): its credit pays its keys' requests once its pools are exhausted. Codes and CSV exports are
 * the member's own, so they are not offered there.
 */
import { useApolloClient, useMutation, useQuery, useSubscription } from '@apollo/client/react';
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { usePaymentProviders } from '../../billing/hooks/use-payment-providers.ts';
import { LiveBadge, type LiveStatus } from '../../shell/components/live-badge.tsx';
import { EmptyState, ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { SignedIn, SignInPrompt } from '../../shell/components/signed-in.tsx';
import { useSerialRefetch } from '../../shell/hooks/use-serial-refetch.ts';
import { BUY_CREDIT } from '../graphql/buy-credit.mutation.ts';
import { CREDIT_UPDATED_SUBSCRIPTION } from '../graphql/credit-updated.subscription.ts';
import type { CreditFragment } from '../graphql/credit.fragment.ts';
import { CREDITS_QUERY } from '../graphql/credits.query.ts';
import { REDEEM_CODE } from '../graphql/redeem-code.mutation.ts';
import { SET_PAY_FROM_CREDIT } from '../graphql/set-pay-from-credit.mutation.ts';
import { ORGANISATIONS_QUERY } from '../../enterprise/graphql/organisations.query.ts';
import { ExportLinks } from './export-links.tsx';
import './credit.css';

export function CreditsPage() {
  const { t } = useTranslation(['credit', 'shell']);
  const organisationId = useSearchParams()[0].get('org');
  return (
    <div className="container page credits-page">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <SignedIn
        loadError={t('loadError')}
        loadingLabel={t('loading')}
        signedOut={
          <>
            <header className="page-header">
              <h1>{t('title')}</h1>
            </header>
            <SignInPrompt title={t('signedOut.title')} body={t('signedOut.body')} action={t('signedOut.action')} />
          </>
        }
      >
        {() => (
          <>
            <CreditsHeading organisationId={organisationId} />
            <Credits organisationId={organisationId} />
          </>
        )}
      </SignedIn>
    </div>
  );
}

function CreditsHeading({ organisationId }: { organisationId: string | null }) {
  const { t } = useTranslation('credit');
  const { data } = useQuery(ORGANISATIONS_QUERY, { skip: organisationId === null });
  const name = data?.organisations.find((organisation) => organisation.id === organisationId)?.name;
  if (organisationId === null)
    return (
      <header className="page-header">
        <h1>{t('title')}</h1>
      </header>
    );
  return (
    <header className="page-header">
      <div>
        <p className="eyebrow">{name ?? '…'}</p>
        <h1>{t('organisation.title')}</h1>
        <p>
          <Link to={`/enterprise/console?org=${encodeURIComponent(organisationId)}`}>{t('organisation.back')}</Link>
        </p>
      </div>
    </header>
  );
}

function Credits({ organisationId }: { organisationId: string | null }) {
  const { t } = useTranslation('credit');
  const format = useFormat();
  const client = useApolloClient();
  const { data, loading, error, refetch } = useQuery(CREDITS_QUERY, { variables: { first: 50, organisationId }, notifyOnNetworkStatusChange: true });
  const refreshEntries = useSerialRefetch(refetch);
  const subscription = useSubscription(CREDIT_UPDATED_SUBSCRIPTION, {
    variables: { organisationId },
    onData: ({ data: pushed }) => {
      if (!pushed.data?.creditUpdated) return;
      // The balance moved: the entries behind it did too.
      refreshEntries();
    },
  });
  const live: LiveStatus = subscription.error ? 'interrupted' : subscription.data ? 'live' : 'connecting';
  if (error) return <ErrorState title={t('loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('loading')} />;
  const credit = data.credits;
  const entries = data.creditEntries.entries;
  return (
    <>
      <div className="credits-balance credit-card">
        <div>
          <p className="muted">{t('balance')}</p>
          <p className="credits-balance__amount" data-testid="credit-balance">
            {format.money(credit.balance)}
          </p>
        </div>
        <LiveBadge status={live} label={t(`live.${live}`)} />
      </div>
      <PayFromCredit credit={credit} organisationId={organisationId} />
      <div className="credits-actions">
        <BuyCredit credit={credit} organisationId={organisationId} />
        {organisationId === null && <RedeemCode onRedeemed={() => void client.refetchQueries({ include: [CREDITS_QUERY] }).catch(() => undefined)} />}
      </div>
      <h2>{t('entries.heading')}</h2>
      {entries.length === 0 ? (
        <EmptyState title={t('entries.empty')} compact>
          <p>{t('entries.emptyBody')}</p>
        </EmptyState>
      ) : (
        <table className="credits-entries">
          <thead>
            <tr>
              <th scope="col">{t('entries.at')}</th>
              <th scope="col">{t('entries.kind')}</th>
              <th scope="col" className="num">
                {t('entries.amount')}
              </th>
              <th scope="col" className="num">
                {t('entries.balanceAfter')}
              </th>
              <th scope="col">{t('entries.reference')}</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id} data-kind={entry.kind}>
                <td>{format.dateTime(entry.at)}</td>
                <td>{t(`kind.${entry.kind}`)}</td>
                <td className={`num ${entry.amount.amountMicros < 0 ? 'credits-entries__out' : 'credits-entries__in'}`}>{format.money(entry.amount)}</td>
                <td className="num">{format.money(entry.balanceAfter)}</td>
                <td>
                  <code>{entry.reference ?? '—'}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {organisationId === null && <ExportLinks />}
    </>
  );
}

function PayFromCredit({ credit, organisationId }: { credit: CreditFragment; organisationId: string | null }) {
  const { t } = useTranslation('credit');
  const [set, state] = useMutation(SET_PAY_FROM_CREDIT);
  return (
    <div className="credits-optin credit-card">
      <label>
        <input type="checkbox" checked={credit.payFromCredit} disabled={state.loading} onChange={(event) => void set({ variables: { on: event.target.checked, organisationId }, refetchQueries: [CREDITS_QUERY], awaitRefetchQueries: true }).catch(() => undefined)} />{' '}
        <strong>{t('optIn.label')}</strong>
      </label>
      <p className="muted">{organisationId === null ? t('optIn.body') : t('organisation.optInBody')}</p>
      <ProblemLine error={state.error} />
    </div>
  );
}

function BuyCredit({ credit, organisationId }: { credit: CreditFragment; organisationId: string | null }) {
  const { t } = useTranslation('credit');
  const format = useFormat();
  const navigate = useNavigate();
  const { providers } = usePaymentProviders();
  const usable = (providers ?? []).filter((provider) => provider.enabled && (provider.currencies === null || provider.currencies.includes(credit.balance.currency)));
  const [amount, setAmount] = useState(credit.topUpAmounts[1]?.amount ?? credit.topUpAmounts[0]?.amount ?? '');
  const [provider, setProvider] = useState<string | null>(null);
  const [buy, state] = useMutation(BUY_CREDIT);
  const chosen = provider ?? usable[0]?.id ?? null;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!chosen) return;
    const { data } = await buy({ variables: { amount, provider: chosen, organisationId } }).catch(() => ({ data: undefined }));
    if (data) await navigate(`/checkout/${encodeURIComponent(data.buyCredit.order.id)}`);
  };
  return (
    <form className="credit-card credits-buy" onSubmit={(event) => void submit(event)}>
      <h2>{t('buy.heading')}</h2>
      <div className="credits-buy__amounts" role="group" aria-label={t('buy.amounts')}>
        {credit.topUpAmounts.map((offer) => (
          <button key={offer.amount} type="button" className={offer.amount === amount ? 'button' : 'button button--ghost'} aria-pressed={offer.amount === amount} onClick={() => setAmount(offer.amount)}>
            {format.money(offer)}
          </button>
        ))}
      </div>
      <label>
        {t('buy.custom', { min: format.money(credit.minTopUp), max: format.money(credit.maxTopUp) })}
        <input name="amount" inputMode="decimal" value={amount} onChange={(event) => setAmount(event.target.value)} />
      </label>
      {usable.length === 0 ? (
        <p className="muted">{t('buy.noProvider')}</p>
      ) : (
        <label>
          {t('buy.provider')}
          <select value={chosen ?? ''} onChange={(event) => setProvider(event.target.value)}>
            {usable.map((option) => (
              <option key={option.id} value={option.id}>
                {t(`provider.${option.id}`)}
              </option>
            ))}
          </select>
        </label>
      )}
      <button type="submit" className="button" disabled={!chosen || state.loading}>
        {state.loading ? t('buy.opening') : t('buy.submit')}
      </button>
      <ProblemLine error={state.error} />
    </form>
  );
}

function RedeemCode({ onRedeemed }: { onRedeemed(): void }) {
  const { t } = useTranslation('credit');
  const format = useFormat();
  const [code, setCode] = useState('');
  const [redeem, state] = useMutation(REDEEM_CODE);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const { data } = await redeem({ variables: { code } }).catch(() => ({ data: undefined }));
    if (data) {
      setCode('');
      onRedeemed();
    }
  };
  const done = state.data?.redeemCode;
  return (
    <form className="credit-card credits-redeem" onSubmit={(event) => void submit(event)}>
      <h2>{t('redeem.heading')}</h2>
      <label>
        {t('redeem.label')}
        <input name="code" autoComplete="off" spellCheck={false} placeholder="SVC-XXXX-XXXX-XXXX-XXXX" value={code} onChange={(event) => setCode(event.target.value)} />
      </label>
      <button type="submit" className="button" disabled={code.trim() === '' || state.loading}>
        {state.loading ? t('redeem.redeeming') : t('redeem.submit')}
      </button>
      {done && !state.loading && !state.error && (
        <p role="status" className="credits-redeem__done">
          {t('redeem.done', { amount: format.money(done.entry.amount) })}
        </p>
      )}
      <ProblemLine error={state.error} />
    </form>
  );
}

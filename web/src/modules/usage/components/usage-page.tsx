/** `/account/usage`: the member's pools drawn live, and their recent requests with what each cost. */
import { useId } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import { LiveBadge, type LiveStatus } from '../../shell/components/live-badge.tsx';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { SignedIn, SignInPrompt } from '../../shell/components/signed-in.tsx';
import type { UsageFragment } from '../graphql/usage.fragment.ts';
import { useLiveUsage } from '../hooks/use-live-usage.ts';
import { FirstRequest } from './first-request.tsx';
import { PoolClasses } from './pool-classes.tsx';
import { UsageHistoryTable } from './usage-history-table.tsx';
import './usage.css';

export function UsagePage() {
  const { t } = useTranslation(['usage', 'shell']);
  return (
    <div className="container page">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/account">{t('breadcrumb')}</Link>
        </p>
        <h1>{t('title')}</h1>
      </header>
      <SignedIn
        loadError={t('loadError')}
        loadingLabel={t('checkingSession')}
        signedOut={<SignInPrompt className="usage-sign-in" title={t('signIn.title')} body={t('signIn.body')} action={t('signIn.action')} />}
      >
        {() => <LiveUsage />}
      </SignedIn>
    </div>
  );
}

function LiveUsage() {
  const { t } = useTranslation('usage');
  const id = useId();
  const state = useLiveUsage();
  const { usage, history } = state;
  return (
    <>
      <section className="section" aria-labelledby={`${id}-pools`}>
        <div className="section__head usage-head">
          <div>
            <h2 id={`${id}-pools`}>{t('pools.heading')}</h2>
            {usage && <PoolsSummary usage={usage} />}
          </div>
          <LiveStatusBadge status={state.live} />
        </div>
        {state.usageError && !usage ? (
          <ErrorState title={t('pools.loadError')} error={state.usageError} onRetry={state.retry} retrying={state.usageLoading} />
        ) : !usage ? (
          <LoadingState label={t('pools.loading')} />
        ) : (
          <PoolClasses pools={usage.pools} timezone={usage.timezone} />
        )}
      </section>

      <section className="section" aria-labelledby={`${id}-history`}>
        <div className="section__head">
          <h2 id={`${id}-history`}>{t('history.heading')}</h2>
          <p className="muted">{t('history.note')}</p>
        </div>
        {state.historyError && !history ? (
          <ErrorState title={t('history.loadError')} error={state.historyError} onRetry={state.retry} retrying={state.historyLoading} />
        ) : !history ? (
          <LoadingState label={t('history.loading')} />
        ) : history.nodes.length === 0 ? (
          <FirstRequest />
        ) : (
          <>
            <UsageHistoryTable nodes={history.nodes} requestHref={(requestId) => `/account/usage/requests/${encodeURIComponent(requestId)}`} />
            {history.pageInfo.hasNextPage && (
              <div className="actions usage-more">
                <button type="button" className="button button--ghost" onClick={state.loadOlder} disabled={state.loadingOlder}>
                  {state.loadingOlder ? t('history.loadingOlder') : t('history.older')}
                </button>
              </div>
            )}
          </>
        )}
      </section>
    </>
  );
}

function PoolsSummary({ usage }: { usage: UsageFragment }) {
  const { t } = useTranslation('usage');
  const packageName = usePackageName();
  return (
    <p className="muted">
      <Trans
        t={t}
        i18nKey="pools.summary"
        values={{ plan: packageName(usage.packageId), currency: usage.currency, timezone: usage.timezone }}
        components={{ badge: <span className="badge" />, strong: <strong />, pricing: <Link to="/pricing" /> }}
      />
    </p>
  );
}

function LiveStatusBadge({ status }: { status: LiveStatus }) {
  const { t } = useTranslation('usage');
  return <LiveBadge status={status} label={t(`live.${status}`)} title={status === 'live' ? t('live.title') : undefined} />;
}

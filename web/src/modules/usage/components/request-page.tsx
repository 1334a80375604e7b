/** `/account/usage/requests/:id`: one of the member's requests — how it went, and every fact the ledger kept. */
import { useQuery } from '@apollo/client/react';
import type { ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { CopyButton } from '../../account/components/copy-button.tsx';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { SignedIn, SignInPrompt } from '../../shell/components/signed-in.tsx';
import { MY_REQUEST_QUERY } from '../graphql/my-request.query.ts';
import type { RequestPricing } from '../graphql/cost-breakdown.fragment.ts';
import type { UsageRecordFragment } from '../graphql/usage-record.fragment.ts';
import { CostBreakdown } from './cost-breakdown.tsx';
import { RequestFacts, RequestSummary } from './request-parts.tsx';
import './usage.css';

export function RequestPage() {
  const { t } = useTranslation(['usage', 'shell']);
  const { id = '' } = useParams();
  return (
    <div className="container page">
      <title>{t('shell:pageTitle', { page: t('request.title') })}</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/account/usage">{t('title')}</Link>
        </p>
        <h1>{t('request.title')}</h1>
      </header>
      <SignedIn
        loadError={t('loadError')}
        loadingLabel={t('checkingSession')}
        signedOut={<SignInPrompt className="usage-sign-in" title={t('request.signIn.title')} body={t('request.signIn.body')} action={t('signIn.action')} />}
      >
        {() => <MyRequest requestId={id} />}
      </SignedIn>
    </div>
  );
}

function MyRequest({ requestId }: { requestId: string }) {
  const { t } = useTranslation('usage');
  const { data, loading, error, refetch } = useQuery(MY_REQUEST_QUERY, { variables: { requestId }, notifyOnNetworkStatusChange: true });
  if (error && !data) return <ErrorState title={t('request.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('request.loading')} />;
  if (!data.myRequest) {
    return (
      <EmptyState title={t('request.notFound')}>
        <p>
          <Trans t={t} i18nKey="request.notFoundHint" values={{ id: requestId }} components={{ code: <code />, usage: <Link to="/account/usage" /> }} />
        </p>
      </EmptyState>
    );
  }
  return <RequestStory record={data.myRequest} />;
}

/**
 * The request's id (to copy into a message to support), how it went, its facts, and how its cost was
 * computed — not for a refund, where nothing was charged and the facts say so.
 */
export function RequestStory({ record, extra }: { record: UsageRecordFragment & RequestPricing; extra?: ReactNode }) {
  const { t } = useTranslation('usage');
  return (
    <section className="request-story" data-request={record.requestId} aria-label={t('request.storyLabel')}>
      <div className="request-story__id">
        <code>{record.requestId}</code>
        <CopyButton value={record.requestId} label={t('request.copyId')} />
      </div>
      <p className={`request-story__summary request-story__summary--${record.status}`} data-testid="request-summary">
        <RequestSummary record={record} />
      </p>
      <RequestFacts record={record} extra={extra} />
      {record.pricing && !record.refunded && <CostBreakdown pricing={record.pricing} cost={record.cost} />}
    </section>
  );
}

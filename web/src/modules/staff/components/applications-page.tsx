/**
 * `/admin/applications`: the enterprise review queue. Pending applications oldest first (the one waiting
 * longest at the top); other states for looking back. Live: `enterpriseApplicationChanged` reaches every
 * staff screen on every instance — a new application, one withdrawn, one decided by someone else — and
 * the list is fetched again so its order and membership are the server's.
 */
import { useQuery, useSubscription } from '@apollo/client/react';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { ApplicationStateBadge } from '../../enterprise/components/application-parts.tsx';
import '../../enterprise/components/enterprise.css';
import '../../usage/components/usage.css';
import { ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION } from '../../enterprise/graphql/enterprise-application-changed.subscription.ts';
import type { EnterpriseApplicationState } from '../../enterprise/graphql/enterprise-application.fragment.ts';
import { useCountryName } from '../../enterprise/hooks/use-countries.ts';
import { LiveBadge } from '../../shell/components/live-badge.tsx';
import { rovingKeys } from '../../shell/hooks/roving-keys.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { ENTERPRISE_APPLICATIONS_QUERY, type ReviewApplication } from '../graphql/enterprise-applications.query.ts';
import { appendPage, useLoadMore } from '../hooks/use-load-more.ts';
import { MoreButton } from './search-bar.tsx';

const pageSize = 50;
const filters = ['pending_review', 'approved', 'rejected', 'withdrawn', 'all'] as const;
type Filter = (typeof filters)[number];

function isFilter(value: string | null): value is Filter {
  return filters.some((filter) => filter === value);
}

export function ApplicationsPage() {
  const { t } = useTranslation(['enterprise', 'staff']);
  const [params, setParams] = useSearchParams();
  const asked = params.get('state');
  const filter: Filter = isFilter(asked) ? asked : 'pending_review';
  const state: EnterpriseApplicationState | null = filter === 'all' ? null : filter;
  const { data, previousData, loading, error, refetch, fetchMore } = useQuery(ENTERPRISE_APPLICATIONS_QUERY, {
    variables: { state, first: pageSize },
    notifyOnNetworkStatusChange: true,
  });
  const [arrived, setArrived] = useState<string[]>([]);
  const refreshing = useRef<Promise<unknown> | null>(null);
  const subscription = useSubscription(ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION, {
    onData: ({ data: pushed }) => {
      const changed = pushed.data?.enterpriseApplicationChanged;
      if (!changed) return;
      if (changed.state === 'pending_review') setArrived((previous) => (previous.includes(changed.id) ? previous : [...previous, changed.id]));
      refreshing.current ??= refetch().catch(() => undefined).finally(() => (refreshing.current = null));
    },
  });
  const page = (data ?? previousData)?.enterpriseApplications;
  const choose = (option: Filter) => setParams(option === 'pending_review' ? {} : { state: option }, { replace: true });
  const live = subscription.error ? 'interrupted' : 'live';

  const [loadingMore, more] = useLoadMore(page?.pageInfo.endCursor, (after) =>
    fetchMore({
      variables: { after },
      updateQuery: (previous, { fetchMoreResult }) => ({
        enterpriseApplications: appendPage(previous.enterpriseApplications, fetchMoreResult.enterpriseApplications),
      }),
    }),
  );

  return (
    <div className="admin-page">
      <title>{t('staff:pageTitle', { page: t('review.title') })}</title>
      <header className="admin-head">
        <div>
          <h1>{t('review.title')}</h1>
          <p className="muted admin-head__note">{t('review.note')}</p>
        </div>
        <div className="review-head__right">
          <LiveBadge status={live} label={t(`review.live.${live}`)} />
          <div className="segmented" role="radiogroup" aria-label={t('review.filterLabel')} onKeyDown={rovingKeys(filters, filter, choose)}>
            {filters.map((option) => (
              <button
                key={option}
                type="button"
                role="radio"
                aria-checked={filter === option}
                tabIndex={filter === option ? 0 : -1}
                className={filter === option ? 'segmented__option segmented__option--active' : 'segmented__option'}
                onClick={() => choose(option)}
              >
                {t(`review.filters.${option}`)}
              </button>
            ))}
          </div>
        </div>
      </header>
      {error && !page ? (
        <ErrorState title={t('review.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !page ? (
        <LoadingState label={t('review.loading')} />
      ) : page.nodes.length === 0 ? (
        <EmptyState title={t(`review.empty.${filter}`)}>
          <p>{filter === 'pending_review' ? t('review.emptyHintPending') : t('review.emptyHint')}</p>
        </EmptyState>
      ) : (
        <>
          <p className="admin-count muted">
            {page.pageInfo.hasNextPage ? t('review.countMore', { count: page.nodes.length }) : t('review.count', { count: page.nodes.length })}
          </p>
          <QueueTable applications={page.nodes} arrived={arrived} showState={filter === 'all'} />
          {page.pageInfo.hasNextPage && (
            <MoreButton onMore={() => void more()} loadingMore={loadingMore} label={t('review.more')} loadingLabel={t('staff:loadingMore')} />
          )}
        </>
      )}
    </div>
  );
}

function QueueTable({ applications, arrived, showState }: { applications: ReviewApplication[]; arrived: string[]; showState: boolean }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const countryName = useCountryName();
  const now = Date.now();
  return (
    <div className="table-scroll">
      <table className="admin-table admin-table--rows review-table stacked-table">
        <thead>
          <tr>
            <th scope="col">{t('review.columns.organisation')}</th>
            <th scope="col">{t('review.columns.kind')}</th>
            <th scope="col">{t('review.columns.applicant')}</th>
            <th scope="col">{t('review.columns.country')}</th>
            <th scope="col" className="num">
              {t('review.columns.tokens')}
            </th>
            <th scope="col">{t('review.columns.submitted')}</th>
            {showState && <th scope="col">{t('review.columns.state')}</th>}
          </tr>
        </thead>
        <tbody>
          {applications.map((application) => (
            <tr key={application.id} data-application={application.id} className={arrived.includes(application.id) ? 'review-table__new' : undefined}>
              <th scope="row">
                <Link to={`/admin/applications/${application.id}`} className="account-link">
                  {application.organisation}
                </Link>
                <span className="cell-note" title={application.useCase}>
                  {application.useCase}
                </span>
              </th>
              <td data-label={t('review.columns.kind')}>{t(`kind.${application.kind}.name`)}</td>
              <td data-label={t('review.columns.applicant')}>
                {application.applicant ? (
                  <>
                    <Link to={`/admin/accounts/${application.applicant.id}`} className="review-table__email" title={application.applicant.email}>
                      {application.applicant.email}
                    </Link>
                    <span className="cell-note">{t('review.accountAge', { age: format.duration(Math.max(0, now - Date.parse(application.applicant.createdAt))) })}</span>
                  </>
                ) : (
                  <span className="muted">{t('review.detail.applicant.gone')}</span>
                )}
              </td>
              <td data-label={t('review.columns.country')}>{countryName(application.country)}</td>
              <td className="num" data-label={t('review.columns.tokens')}>
                {format.compact(application.expectedMonthlyTokens)}
              </td>
              <td className="nowrap" data-label={t('review.columns.submitted')}>
                {format.dateTime(application.submittedAt)}
                {application.state === 'pending_review' ? (
                  <span className="cell-note">{t('review.waiting', { duration: format.duration(Math.max(0, now - Date.parse(application.submittedAt))) })}</span>
                ) : (
                  application.decidedAt && <span className="cell-note">{t('review.decided', { time: format.dateTime(application.decidedAt) })}</span>
                )}
              </td>
              {showState && (
                <td data-label={t('review.columns.state')}>
                  <ApplicationStateBadge state={application.state} />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

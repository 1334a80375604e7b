/**
 * What the staff search box found (`staffSearch`): each hit as a line naming the record and what it belongs
 * to, linking to its page. One hit is opened at once — the search "goes to the record" — replacing the
 * search in the history, so Back returns to where the search was typed.
 */
import { useQuery } from '@apollo/client/react';
import { useEffect, type ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { useBillingText } from '../../billing/components/labels.ts';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { CredentialLabel, ShortRequestId } from '../../usage/components/request-parts.tsx';
import { STAFF_SEARCH_QUERY, type SearchHit } from '../graphql/staff-search.query.ts';
import { AccountStatus } from './account-badges.tsx';

/** The page of a hit's record. */
export function hitPath(hit: SearchHit): string {
  switch (hit.kind) {
    case 'account':
    case 'organisation':
      return `/admin/accounts/${hit.id}`;
    case 'api_key':
      return hit.account ? `/admin/accounts/${hit.account.id}` : '/admin/accounts';
    case 'request':
      return `/admin/requests/${encodeURIComponent(hit.id)}`;
    case 'order':
      return `/admin/orders/${encodeURIComponent(hit.id)}`;
    case 'application':
      return `/admin/applications/${hit.id}`;
  }
}

export function SearchResults({ query }: { query: string }) {
  const { t } = useTranslation('staff');
  const navigate = useNavigate();
  const { data, loading, error, refetch } = useQuery(STAFF_SEARCH_QUERY, { variables: { query }, notifyOnNetworkStatusChange: true });
  const result = data?.staffSearch;
  const only = result && result.hits.length === 1 && !loading ? result.hits[0]! : null;
  useEffect(() => {
    if (only) void navigate(hitPath(only), { replace: true });
  }, [only, navigate]);

  if (error && !result) return <ErrorState title={t('search.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!result || only) return <LoadingState label={only ? t('search.opening') : t('search.loading')} />;
  if (result.hits.length === 0) {
    return (
      <EmptyState title={t('search.noMatch', { search: query })}>
        <p>{t(`search.noMatchHint.${result.shape}`)}</p>
      </EmptyState>
    );
  }
  return (
    <>
      <p className="muted admin-count" aria-live="polite">
        <Trans t={t} i18nKey={`search.readAs.${result.shape}`} values={{ search: result.query }} components={{ code: <code /> }} />{' '}
        {result.truncated ? t('search.truncated') : t('search.count', { count: result.hits.length })}
      </p>
      <ul className="search-hits">
        {result.hits.map((hit) => (
          <li key={`${hit.kind}:${hit.id}`} className="search-hit" data-kind={hit.kind} data-hit={hit.id}>
            <span className={`search-hit__kind search-hit__kind--${hit.kind}`}>{t(`search.kind.${hit.kind}`)}</span>
            <div className="search-hit__body">
              <HitTitle hit={hit} />
              <HitDetail hit={hit} />
            </div>
            <span className="search-hit__matched muted">{t(`search.matched.${hit.matched}`)}</span>
          </li>
        ))}
      </ul>
    </>
  );
}

function HitTitle({ hit }: { hit: SearchHit }) {
  const to = hitPath(hit);
  switch (hit.kind) {
    case 'account':
      return (
        <Link to={to} className="search-hit__title">
          {hit.account?.email ?? hit.id}
        </Link>
      );
    case 'organisation':
      return (
        <Link to={to} className="search-hit__title">
          {hit.organisationName ?? hit.id}
        </Link>
      );
    case 'api_key':
      return (
        <Link to={to} className="search-hit__title">
          {hit.key ? <CredentialLabel record={{ key: hit.key, credentialKind: hit.key.kind === 'enterprise' ? 'enterprise_key' : 'api_key' }} /> : hit.id}
        </Link>
      );
    case 'request':
      return (
        <Link to={to} className="search-hit__title">
          <ShortRequestId id={hit.id} />
        </Link>
      );
    case 'order':
      return (
        <Link to={to} className="search-hit__title">
          <code>{hit.id}</code>
        </Link>
      );
    case 'application':
      return (
        <Link to={to} className="search-hit__title">
          {hit.application?.organisation ?? hit.id}
        </Link>
      );
  }
}

/** What the record is and whose: a line of facts in the reader's language. */
function HitDetail({ hit }: { hit: SearchHit }) {
  const { t } = useTranslation(['staff', 'usage', 'enterprise']);
  const format = useFormat();
  const billing = useBillingText();
  const packageName = usePackageName();
  const owner = hit.account ? (hit.account.kind === 'organisation' ? (hit.organisationName ?? hit.account.displayName ?? hit.account.email) : hit.account.email) : null;
  const parts: ReactNode[] = [];
  if ((hit.kind === 'account' || hit.kind === 'organisation') && hit.account) {
    parts.push(packageName(hit.account.planPackage), <AccountStatus key="status" account={hit.account} />, t('search.created', { time: format.dateTime(hit.account.createdAt) }));
  }
  if (hit.kind === 'api_key' && hit.key) {
    parts.push(<code key="prefix">{`${hit.key.prefix}…${hit.key.last4}`}</code>);
    if (owner) parts.push(hit.key.kind === 'enterprise' ? t('search.keyOfOrganisation', { owner }) : t('search.keyOf', { owner }));
  }
  if (hit.kind === 'request' && hit.request) {
    parts.push(<code key="model">{hit.request.model}</code>, t(`usage:history.status.${hit.request.status}`), format.money(hit.request.cost), format.dateTime(hit.request.createdAt));
    if (owner) parts.push(t('search.paidBy', { owner }));
  }
  if (hit.kind === 'order' && hit.order) {
    parts.push(format.money({ amount: hit.order.amount, currency: hit.order.currency }), billing.stateLabel(hit.order.state), packageName(hit.order.packageId), billing.providerName(hit.order.provider));
    if (owner) parts.push(t('search.paidBy', { owner }));
  }
  if (hit.kind === 'application' && hit.application) {
    const state = hit.application.state as 'pending_review' | 'approved' | 'rejected' | 'withdrawn';
    parts.push(t(`enterprise:state.${state}`), format.dateTime(hit.application.createdAt));
    if (owner) parts.push(t('search.appliedBy', { owner }));
  }
  return (
    <span className="search-hit__detail muted">
      {parts.map((part, i) => (
        <span key={i} className="search-hit__part">
          {part}
        </span>
      ))}
    </span>
  );
}

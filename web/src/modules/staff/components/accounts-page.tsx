/**
 * `/admin/accounts`: every account, newest first — and the admin app's one search box, which finds
 * accounts (email, @domain), organisations (name), keys (svc_live_…, svc_ent_…), requests (mbr_…) and
 * orders (number or trade number), and opens the record when there is one (`SearchResults`).
 */
import { useQuery } from '@apollo/client/react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { ACCOUNTS_QUERY } from '../graphql/accounts.query.ts';
import type { StaffAccountFragment } from '../graphql/staff-account.fragment.ts';
import { appendPage, useLoadMore } from '../hooks/use-load-more.ts';
import { AccountStatus, PackageBadge, RoleBadge } from './account-badges.tsx';
import { MoreButton, SearchBar } from './search-bar.tsx';
import { SearchResults } from './search-results.tsx';

const pageSize = 25;

export function AccountsPage() {
  const { t } = useTranslation('staff');
  const [params, setParams] = useSearchParams();
  const search = params.get('q') ?? '';
  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('accounts.title') })}</title>
      <header className="admin-head">
        <h1>{t('accounts.title')}</h1>
      </header>
      <SearchBar
        value={search}
        onSearch={(q) => setParams(q ? { q } : {})}
        label={t('accounts.searchLabel')}
        placeholder={t('accounts.searchPlaceholder')}
        submitLabel={t('accounts.search')}
        maxLength={254}
        clearLabel={t('accounts.clear')}
      />
      <p className="muted search-bar__hint">{t('accounts.searchHint')}</p>
      {search ? <SearchResults query={search} /> : <AllAccounts />}
    </div>
  );
}

/** Every account, newest first, in pages. */
function AllAccounts() {
  const { t } = useTranslation('staff');
  const { data, previousData, loading, error, refetch, fetchMore } = useQuery(ACCOUNTS_QUERY, {
    variables: { search: null, first: pageSize },
    notifyOnNetworkStatusChange: true,
  });
  const page = (data ?? previousData)?.accounts;

  const [loadingMore, more] = useLoadMore(page?.pageInfo.endCursor, (after) =>
    fetchMore({
      variables: { after },
      updateQuery: (previous, { fetchMoreResult }) => ({ accounts: appendPage(previous.accounts, fetchMoreResult.accounts) }),
    }),
  );
  return (
    <>
      {error && !page ? (
        <ErrorState title={t('accounts.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !page ? (
        <LoadingState label={t('accounts.loading')} />
      ) : page.nodes.length === 0 ? (
        <EmptyState title={t('accounts.none')}>
          <p>{t('accounts.noneHint')}</p>
        </EmptyState>
      ) : (
        <>
          <p className="muted admin-count" aria-live="polite">
            {t('accounts.all')}
            {loading && !loadingMore && <span> · {t('updating')}</span>}
          </p>
          <AccountsTable accounts={page.nodes} />
          {page.pageInfo.hasNextPage && (
            <MoreButton onMore={() => void more()} loadingMore={loadingMore} label={t('accounts.more')} loadingLabel={t('loadingMore')} />
          )}
        </>
      )}
    </>
  );
}

function AccountsTable({ accounts }: { accounts: StaffAccountFragment[] }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  return (
    <div className="table-scroll">
      <table className="admin-table admin-table--rows stacked-table">
        <thead>
          <tr>
            <th scope="col">{t('accounts.columns.email')}</th>
            <th scope="col">{t('accounts.columns.role')}</th>
            <th scope="col">{t('accounts.columns.package')}</th>
            <th scope="col">{t('accounts.columns.status')}</th>
            <th scope="col">{t('accounts.columns.created')}</th>
          </tr>
        </thead>
        <tbody>
          {accounts.map((account) => (
            <tr key={account.id}>
              <th scope="row">
                <Link to={`/admin/accounts/${account.id}`} className="account-link">
                  {account.email}
                </Link>
                {account.displayName && <span className="muted"> · {account.displayName}</span>}
              </th>
              <td data-label={t('accounts.columns.role')}>
                <RoleBadge role={account.role} />
              </td>
              <td data-label={t('accounts.columns.package')}>
                <PackageBadge packageId={account.planPackage} until={account.planPackageUntil} />
              </td>
              <td data-label={t('accounts.columns.status')}>
                <AccountStatus account={account} />
              </td>
              <td className="nowrap" data-label={t('accounts.columns.created')}>
                {format.dateTime(account.createdAt)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

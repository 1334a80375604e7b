/** `/admin/accounts`: find an account by part of its email or by its id; newest accounts first. */
import { useQuery } from '@apollo/client/react';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { ACCOUNTS_QUERY } from '../graphql/accounts.query.ts';
import type { StaffAccountFragment } from '../graphql/staff-account.fragment.ts';
import { AccountStatus, PackageBadge, RoleBadge } from './account-badges.tsx';

const pageSize = 25;

export function AccountsPage() {
  const { t } = useTranslation('staff');
  const id = useId();
  const [params, setParams] = useSearchParams();
  const search = params.get('q') ?? '';
  const [draft, setDraft] = useState(search);
  useEffect(() => setDraft(search), [search]);
  const { data, previousData, loading, error, refetch, fetchMore } = useQuery(ACCOUNTS_QUERY, {
    variables: { search: search || null, first: pageSize },
    notifyOnNetworkStatusChange: true,
  });
  const [loadingMore, setLoadingMore] = useState(false);
  const page = (data ?? previousData)?.accounts;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const q = draft.trim();
    setParams(q ? { q } : {});
  };
  const more = async () => {
    if (!page?.pageInfo.endCursor) return;
    setLoadingMore(true);
    try {
      await fetchMore({
        variables: { after: page.pageInfo.endCursor },
        updateQuery: (previous, { fetchMoreResult }) => ({
          accounts: { nodes: [...previous.accounts.nodes, ...fetchMoreResult.accounts.nodes], pageInfo: fetchMoreResult.accounts.pageInfo },
        }),
      });
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('accounts.title') })}</title>
      <header className="admin-head">
        <h1>{t('accounts.title')}</h1>
      </header>
      <form className="search-bar" role="search" onSubmit={submit}>
        <label htmlFor={`${id}-q`} className="visually-hidden">
          {t('accounts.searchLabel')}
        </label>
        <input
          id={`${id}-q`}
          type="search"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          placeholder={t('accounts.searchPlaceholder')}
          autoComplete="off"
          spellCheck={false}
          maxLength={254}
        />
        <button type="submit" className="button">
          {t('accounts.search')}
        </button>
        {search && (
          <button type="button" className="button button--ghost" onClick={() => setParams({})}>
            {t('accounts.clear')}
          </button>
        )}
      </form>
      {error && !page ? (
        <ErrorState title={t('accounts.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !page ? (
        <LoadingState label={t('accounts.loading')} />
      ) : page.nodes.length === 0 ? (
        <div className="state state--empty">
          {search ? (
            <>
              <p className="state__title">{t('accounts.noMatch', { search })}</p>
              <p>{t('accounts.noMatchHint')}</p>
            </>
          ) : (
            <>
              <p className="state__title">{t('accounts.none')}</p>
              <p>{t('accounts.noneHint')}</p>
            </>
          )}
        </div>
      ) : (
        <>
          <p className="muted admin-count" aria-live="polite">
            {search ? t('accounts.matching', { search }) : t('accounts.all')}
            {loading && !loadingMore && <span> · {t('updating')}</span>}
          </p>
          <AccountsTable accounts={page.nodes} />
          {page.pageInfo.hasNextPage && (
            <div className="actions">
              <button type="button" className="button button--ghost" onClick={() => void more()} disabled={loadingMore}>
                {loadingMore ? t('loadingMore') : t('accounts.more')}
              </button>
            </div>
          )}
        </>
      )}
    </div>
  );
}

function AccountsTable({ accounts }: { accounts: StaffAccountFragment[] }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  return (
    <div className="table-scroll">
      <table className="admin-table admin-table--rows">
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
              <td>
                <RoleBadge role={account.role} />
              </td>
              <td>
                <PackageBadge packageId={account.planPackage} until={account.planPackageUntil} />
              </td>
              <td>
                <AccountStatus account={account} />
              </td>
              <td className="nowrap">{format.dateTime(account.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** `/admin/accounts`: find an account by part of its email or by its id; newest accounts first. */
import { useQuery } from '@apollo/client/react';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { formatTime } from '../../account/components/format-time.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { ACCOUNTS_QUERY } from '../graphql/accounts.query.ts';
import type { StaffAccountFragment } from '../graphql/staff-account.fragment.ts';
import { AccountStatus, PackageBadge, RoleBadge } from './account-badges.tsx';

const pageSize = 25;

export function AccountsPage() {
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
      <title>Accounts · svc admin</title>
      <header className="admin-head">
        <h1>Accounts</h1>
      </header>
      <form className="search-bar" role="search" onSubmit={submit}>
        <label htmlFor={`${id}-q`} className="visually-hidden">
          Email or account id
        </label>
        <input
          id={`${id}-q`}
          type="search"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          placeholder="Part of an email, or an account id"
          autoComplete="off"
          spellCheck={false}
          maxLength={254}
        />
        <button type="submit" className="button">
          Search
        </button>
        {search && (
          <button type="button" className="button button--ghost" onClick={() => setParams({})}>
            Clear
          </button>
        )}
      </form>
      {error && !page ? (
        <ErrorState title="Accounts could not be loaded." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !page ? (
        <LoadingState label="Looking accounts up…" />
      ) : page.nodes.length === 0 ? (
        <div className="state state--empty">
          {search ? (
            <>
              <p className="state__title">No account matches “{search}”.</p>
              <p>Search looks for the text anywhere in the email address, or for an exact account id. Check the spelling, or try part of the domain.</p>
            </>
          ) : (
            <>
              <p className="state__title">No accounts yet.</p>
              <p>Accounts appear here as people sign up.</p>
            </>
          )}
        </div>
      ) : (
        <>
          <p className="muted admin-count" aria-live="polite">
            {search ? `Matching “${search}”, newest first` : 'All accounts, newest first'}
            {loading && !loadingMore ? ' · updating…' : ''}
          </p>
          <AccountsTable accounts={page.nodes} />
          {page.pageInfo.hasNextPage && (
            <div className="actions">
              <button type="button" className="button button--ghost" onClick={() => void more()} disabled={loadingMore}>
                {loadingMore ? 'Loading…' : 'Show more accounts'}
              </button>
            </div>
          )}
        </>
      )}
    </div>
  );
}

function AccountsTable({ accounts }: { accounts: StaffAccountFragment[] }) {
  return (
    <div className="table-scroll">
      <table className="admin-table admin-table--rows">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Package</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
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
              <td className="nowrap">{formatTime(account.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** `/admin/audit`: every staff action and decision, newest first, narrowed by who, what and to what. */
import { useQuery } from '@apollo/client/react';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { AUDIT_LOG_QUERY, type AuditLogFilter } from '../graphql/audit-log.query.ts';
import { AuditTable } from './audit-table.tsx';
import { actionLabels, targetTypeLabels } from './labels.ts';

const pageSize = 50;

interface Draft {
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
}

function draftOf(params: URLSearchParams): Draft {
  return { actor: params.get('actor') ?? '', action: params.get('action') ?? '', targetType: params.get('targetType') ?? '', targetId: params.get('targetId') ?? '' };
}

export function AuditPage() {
  const id = useId();
  const [params, setParams] = useSearchParams();
  const applied = draftOf(params);
  const [draft, setDraft] = useState<Draft>(applied);
  const paramsKey = params.toString();
  useEffect(() => setDraft(draftOf(new URLSearchParams(paramsKey))), [paramsKey]);
  const filter: AuditLogFilter = {
    actorEmail: applied.actor || null,
    action: applied.action || null,
    targetType: applied.targetType || null,
    targetId: applied.targetId || null,
  };
  const filtered = Object.values(filter).some(Boolean);
  const { data, previousData, loading, error, refetch, fetchMore } = useQuery(AUDIT_LOG_QUERY, {
    variables: { filter, first: pageSize },
    notifyOnNetworkStatusChange: true,
  });
  const [loadingMore, setLoadingMore] = useState(false);
  const page = (data ?? previousData)?.auditLog;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const next: Record<string, string> = {};
    for (const [key, value] of Object.entries(draft)) if (value.trim()) next[key] = value.trim();
    setParams(next);
  };
  const more = async () => {
    if (!page?.pageInfo.endCursor) return;
    setLoadingMore(true);
    try {
      await fetchMore({
        variables: { after: page.pageInfo.endCursor },
        updateQuery: (previous, { fetchMoreResult }) => ({
          auditLog: { nodes: [...previous.auditLog.nodes, ...fetchMoreResult.auditLog.nodes], pageInfo: fetchMoreResult.auditLog.pageInfo },
        }),
      });
    } finally {
      setLoadingMore(false);
    }
  };
  const set = (key: keyof Draft) => (event: { target: { value: string } }) => setDraft({ ...draft, [key]: event.target.value });

  return (
    <div className="admin-page">
      <title>Audit log · svc admin</title>
      <header className="admin-head">
        <div>
          <h1>Audit log</h1>
          <p className="muted admin-head__note">Every staff action and every decision, as it happened. Entries are never edited or removed.</p>
        </div>
      </header>
      <form className="filters" onSubmit={submit} aria-label="Filter the audit log">
        <label className="field" htmlFor={`${id}-actor`}>
          <span>Who (email)</span>
          <input id={`${id}-actor`} type="email" value={draft.actor} onChange={set('actor')} placeholder="support@example.com" autoComplete="off" />
        </label>
        <label className="field" htmlFor={`${id}-action`}>
          <span>What</span>
          <select id={`${id}-action`} value={draft.action} onChange={set('action')}>
            <option value="">Any action</option>
            {Object.entries(actionLabels).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label className="field" htmlFor={`${id}-type`}>
          <span>Target</span>
          <select id={`${id}-type`} value={draft.targetType} onChange={set('targetType')}>
            <option value="">Anything</option>
            {Object.entries(targetTypeLabels).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label className="field" htmlFor={`${id}-target`}>
          <span>Target id</span>
          <input id={`${id}-target`} value={draft.targetId} onChange={set('targetId')} placeholder="An account or key id" autoComplete="off" spellCheck={false} />
        </label>
        <div className="filters__buttons">
          <button type="submit" className="button">
            Apply
          </button>
          {filtered && (
            <button type="button" className="button button--ghost" onClick={() => setParams({})}>
              Clear
            </button>
          )}
        </div>
      </form>
      {error && !page ? (
        <ErrorState title="The audit log could not be loaded." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !page ? (
        <LoadingState label="Reading the audit log…" />
      ) : page.nodes.length === 0 ? (
        <div className="state state--empty">
          {filtered ? (
            <>
              <p className="state__title">No entries match these filters.</p>
              <p>The email must be the whole address of the staff member who acted. Clear the filters to see everything.</p>
            </>
          ) : (
            <>
              <p className="state__title">Nothing has been recorded yet.</p>
              <p>Staff actions — disabling accounts, changing packages, revoking keys — appear here as they happen.</p>
            </>
          )}
        </div>
      ) : (
        <>
          <AuditTable entries={page.nodes} />
          {page.pageInfo.hasNextPage && (
            <div className="actions">
              <button type="button" className="button button--ghost" onClick={() => void more()} disabled={loadingMore}>
                {loadingMore ? 'Loading…' : 'Show older entries'}
              </button>
            </div>
          )}
        </>
      )}
    </div>
  );
}

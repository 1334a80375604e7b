/** `/admin/audit`: every staff action and decision, newest first, narrowed by who, what and to what. */
import { useQuery } from '@apollo/client/react';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { AUDIT_LOG_QUERY, type AuditLogFilter } from '../graphql/audit-log.query.ts';
import { appendPage, useLoadMore } from '../hooks/use-load-more.ts';
import { AuditTable } from './audit-table.tsx';
import { auditActions, targetTypes, useAuditText } from './labels.ts';
import { MoreButton } from './search-bar.tsx';

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
  const { t } = useTranslation('staff');
  const text = useAuditText();
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
  const page = (data ?? previousData)?.auditLog;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const next: Record<string, string> = {};
    for (const [key, value] of Object.entries(draft)) if (value.trim()) next[key] = value.trim();
    setParams(next);
  };
  const [loadingMore, more] = useLoadMore(page?.pageInfo.endCursor, (after) =>
    fetchMore({
      variables: { after },
      updateQuery: (previous, { fetchMoreResult }) => ({ auditLog: appendPage(previous.auditLog, fetchMoreResult.auditLog) }),
    }),
  );
  const set = (key: keyof Draft) => (event: { target: { value: string } }) => setDraft({ ...draft, [key]: event.target.value });

  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('audit.title') })}</title>
      <header className="admin-head">
        <div>
          <h1>{t('audit.title')}</h1>
          <p className="muted admin-head__note">{t('audit.lead')}</p>
        </div>
      </header>
      <form className="filters" onSubmit={submit} aria-label={t('audit.filters.label')}>
        <label className="field" htmlFor={`${id}-actor`}>
          <span>{t('audit.filters.actor')}</span>
          <input id={`${id}-actor`} type="email" value={draft.actor} onChange={set('actor')} placeholder="support@example.com" autoComplete="off" />
        </label>
        <label className="field" htmlFor={`${id}-action`}>
          <span>{t('audit.filters.action')}</span>
          <select id={`${id}-action`} value={draft.action} onChange={set('action')}>
            <option value="">{t('audit.filters.anyAction')}</option>
            {Object.keys(auditActions).map((value) => (
              <option key={value} value={value}>
                {text.action(value)}
              </option>
            ))}
          </select>
        </label>
        <label className="field" htmlFor={`${id}-type`}>
          <span>{t('audit.filters.targetType')}</span>
          <select id={`${id}-type`} value={draft.targetType} onChange={set('targetType')}>
            <option value="">{t('audit.filters.anyTarget')}</option>
            {targetTypes.map((value) => (
              <option key={value} value={value}>
                {text.targetType(value)}
              </option>
            ))}
          </select>
        </label>
        <label className="field" htmlFor={`${id}-target`}>
          <span>{t('audit.filters.targetId')}</span>
          <input id={`${id}-target`} value={draft.targetId} onChange={set('targetId')} placeholder={t('audit.filters.targetIdPlaceholder')} autoComplete="off" spellCheck={false} />
        </label>
        <div className="filters__buttons">
          <button type="submit" className="button">
            {t('audit.filters.apply')}
          </button>
          {filtered && (
            <button type="button" className="button button--ghost" onClick={() => setParams({})}>
              {t('audit.filters.clear')}
            </button>
          )}
        </div>
      </form>
      {error && !page ? (
        <ErrorState title={t('audit.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !page ? (
        <LoadingState label={t('audit.loading')} />
      ) : page.nodes.length === 0 ? (
        <EmptyState title={filtered ? t('audit.noMatch') : t('audit.none')}>
          <p>{filtered ? t('audit.noMatchHint') : t('audit.noneHint')}</p>
        </EmptyState>
      ) : (
        <>
          <AuditTable entries={page.nodes} />
          {page.pageInfo.hasNextPage && (
            <MoreButton onMore={() => void more()} loadingMore={loadingMore} label={t('audit.older')} loadingLabel={t('loadingMore')} />
          )}
        </>
      )}
    </div>
  );
}

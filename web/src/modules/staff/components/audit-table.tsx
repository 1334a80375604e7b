/** Audit entries as a table: when, who, what, to what, why, and what changed. Shared by the log and the account page. */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import type { AuditEntryFragment } from '../graphql/audit-entry.fragment.ts';
import type { AccountRole } from '../graphql/staff-account.fragment.ts';
import { accountRoles, useAuditText } from './labels.ts';

export function AuditTable({ entries, showTarget = true }: { entries: AuditEntryFragment[]; showTarget?: boolean }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const text = useAuditText();
  return (
    <div className="table-scroll">
      <table className="admin-table admin-table--rows audit-table">
        <thead>
          <tr>
            <th scope="col">{t('audit.columns.when')}</th>
            <th scope="col">{t('audit.columns.who')}</th>
            <th scope="col">{t('audit.columns.what')}</th>
            {showTarget && <th scope="col">{t('audit.columns.target')}</th>}
            <th scope="col">{t('audit.columns.reason')}</th>
            <th scope="col">{t('audit.columns.change')}</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-action={entry.action}>
              <td className="nowrap">
                <time dateTime={entry.at}>{format.dateTime(entry.at)}</time>
                {entry.requestId && (
                  <code className="audit-table__request" title={t('audit.requestIdTitle')}>
                    {entry.requestId}
                  </code>
                )}
              </td>
              <td>
                {entry.actorEmail ? (
                  <Link to={`/admin/audit?actor=${encodeURIComponent(entry.actorEmail)}`} title={t('audit.actorTitle')}>
                    {entry.actorEmail}
                  </Link>
                ) : entry.actorId ? (
                  <code>{shortId(entry.actorId)}</code>
                ) : (
                  <span className="muted">{t('audit.system')}</span>
                )}
              </td>
              <td>
                <span className="audit-action" data-code={entry.action}>
                  {text.action(entry.action)}
                </span>
              </td>
              {showTarget && (
                <td>
                  <Target entry={entry} />
                </td>
              )}
              <td className="audit-table__reason">{entry.reason ?? <span className="muted">—</span>}</td>
              <td>
                <Change before={entry.before} after={entry.after} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Target({ entry }: { entry: AuditEntryFragment }) {
  const { t } = useTranslation('staff');
  const text = useAuditText();
  const kind = text.targetType(entry.targetType);
  if (entry.targetType === 'account') {
    return (
      <>
        <span className="muted">{kind} </span>
        <Link to={`/admin/accounts/${entry.targetId}`}>
          <code>{shortId(entry.targetId)}</code>
        </Link>
      </>
    );
  }
  const owner = typeof entry.before?.accountId === 'string' ? entry.before.accountId : null;
  const prefix = typeof entry.before?.prefix === 'string' ? `${entry.before.prefix}…${String(entry.before.last4 ?? '')}` : null;
  return (
    <>
      <span className="muted">{kind} </span>
      <code>{prefix ?? shortId(entry.targetId)}</code>
      {owner && (
        <>
          {' '}
          <Link to={`/admin/accounts/${owner}`} className="muted">
            {t('audit.owner')}
          </Link>
        </>
      )}
    </>
  );
}

/** The fields that changed, "field: before → after"; values that only one side has are shown alone. */
function Change({ before, after }: { before: Record<string, unknown> | null; after: Record<string, unknown> | null }) {
  const { t } = useTranslation('staff');
  const text = useAuditText();
  const show = useShowValue();
  // Fields that did not change (a package "until" that stays empty) and a revoked key's identity (shown as
  // its target) are left out.
  const keys = [...new Set([...Object.keys(after ?? {}), ...Object.keys(before ?? {})])].filter((key) => {
    if (before && after && key in before && key in after) return JSON.stringify(before[key]) !== JSON.stringify(after[key]);
    return !['accountId', 'name', 'prefix', 'last4'].includes(key);
  });
  if (keys.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="audit-change">
      {keys.map((key) => {
        const old = before && key in before ? before[key] : undefined;
        const now = after && key in after ? after[key] : undefined;
        const label = text.field(key);
        return (
          <li key={key}>
            <span className="muted">{label ?? <code>{key}</code>}</span>{' '}
            {old !== undefined && now !== undefined ? (
              <>
                {show(key, old)} <span aria-label={t('audit.became')}>→</span> {show(key, now)}
              </>
            ) : (
              show(key, now ?? old)
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** A recorded value in words: times in the reader's zone, roles named, counts grouped, ids and codes as code. */
function useShowValue(): (key: string, value: unknown) => ReactNode {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const text = useAuditText();
  return (key, value) => {
    if (value === null || value === undefined) return t('audit.noValue');
    if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value)) return format.dateTime(value);
    if (key === 'role' && typeof value === 'string' && accountRoles.includes(value as AccountRole)) return text.role(value as AccountRole);
    if (typeof value === 'number') return format.integer(value);
    if (typeof value === 'boolean') return value ? t('audit.yes') : t('audit.no');
    return <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>;
  };
}

export function shortId(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

/** Audit entries as a table: when, who, what, to what, why, and what changed. Shared by the log and the account page. */
import { Link } from 'react-router';
import { formatTime } from '../../account/components/format-time.ts';
import type { AuditEntryFragment } from '../graphql/audit-entry.fragment.ts';
import { actionLabel, targetTypeLabels } from './labels.ts';

export function AuditTable({ entries, showTarget = true }: { entries: AuditEntryFragment[]; showTarget?: boolean }) {
  return (
    <div className="table-scroll">
      <table className="admin-table admin-table--rows audit-table">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">What</th>
            {showTarget && <th scope="col">Target</th>}
            <th scope="col">Reason</th>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-action={entry.action}>
              <td className="nowrap">
                <time dateTime={entry.at}>{formatTime(entry.at)}</time>
                {entry.requestId && (
                  <span className="audit-table__request" title="Request id: find it in the server logs">
                    {entry.requestId}
                  </span>
                )}
              </td>
              <td>
                {entry.actorEmail ? (
                  <Link to={`/admin/audit?actor=${encodeURIComponent(entry.actorEmail)}`} title="Everything this person did">
                    {entry.actorEmail}
                  </Link>
                ) : entry.actorId ? (
                  <code>{shortId(entry.actorId)}</code>
                ) : (
                  <span className="muted">System</span>
                )}
              </td>
              <td>
                <span className="audit-action" title={entry.action}>
                  {actionLabel(entry.action)}
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
  const kind = targetTypeLabels[entry.targetType] ?? entry.targetType;
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
            (owner)
          </Link>
        </>
      )}
    </>
  );
}

/** The fields that changed, "field: before → after"; values that only one side has are shown alone. */
function Change({ before, after }: { before: Record<string, unknown> | null; after: Record<string, unknown> | null }) {
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
        return (
          <li key={key}>
            <span className="muted">{key}</span>{' '}
            {old !== undefined && now !== undefined ? (
              <>
                {show(old)} <span aria-label="became">→</span> {show(now)}
              </>
            ) : (
              show(now ?? old)
            )}
          </li>
        );
      })}
    </ul>
  );
}

function show(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value)) return formatTime(value);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function shortId(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

/**
 * Audit entries as a table: when, who, what, to what, why, and what changed. Shared by the log and the
 * account page. Below a laptop's width each entry is a card, its column names beside the values.
 */
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import type { AuditEntryFragment } from '../graphql/audit-entry.fragment.ts';
import { AuditChange } from './audit-change.tsx';
import { useAuditText } from './labels.ts';

export function AuditTable({ entries, showTarget = true }: { entries: AuditEntryFragment[]; showTarget?: boolean }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const text = useAuditText();
  const label = {
    when: t('audit.columns.when'),
    who: t('audit.columns.who'),
    what: t('audit.columns.what'),
    target: t('audit.columns.target'),
    reason: t('audit.columns.reason'),
    change: t('audit.columns.change'),
  };
  return (
    <div className="table-scroll">
      <table className="admin-table admin-table--rows audit-table">
        <thead>
          <tr>
            <th scope="col">{label.when}</th>
            <th scope="col">{label.who}</th>
            <th scope="col">{label.what}</th>
            {showTarget && <th scope="col">{label.target}</th>}
            <th scope="col">{label.reason}</th>
            <th scope="col">{label.change}</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id} data-action={entry.action}>
              <td className="nowrap" data-label={label.when}>
                <time dateTime={entry.at}>{format.dateTime(entry.at)}</time>
                {entry.requestId && (
                  <code className="audit-table__request" title={t('audit.requestIdTitle')}>
                    {entry.requestId}
                  </code>
                )}
              </td>
              <td data-label={label.who}>
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
              <td data-label={label.what}>
                <span className="audit-action" data-code={entry.action}>
                  {text.action(entry.action)}
                </span>
              </td>
              {showTarget && (
                <td data-label={label.target}>
                  <span>
                    <Target entry={entry} />
                  </span>
                </td>
              )}
              <td className="audit-table__reason" data-label={label.reason}>
                <Reason reason={entry.reason} />
              </td>
              <td data-label={label.change}>
                <AuditChange entry={entry} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Why, as the actor gave it — or, for what svc itself wrote (a payment, an approval, a period's end), the
 * same sentence in the reader's language, its order or application linked.
 */
function Reason({ reason }: { reason: string | null }) {
  const { t } = useTranslation('staff');
  if (reason === null) return <span className="muted">—</span>;
  for (const [pattern, key, path] of systemReasons) {
    const match = pattern.exec(reason);
    if (!match) continue;
    const id = match[1]!;
    return (
      <span>
        <Trans
          t={t}
          i18nKey={key}
          values={{ id, kind: match[2] ? t(`audit.value.kind.${match[2] as 'start'}`) : '' }}
          components={{ record: path ? <Link to={`${path}/${encodeURIComponent(id)}`} /> : <span />, code: <code /> }}
        />
      </span>
    );
  }
  return <span>{reason}</span>;
}

/** The reasons svc writes itself (server: subscription.service.ts, application*.service.ts, plan-assignment.service.ts). */
const systemReasons: [RegExp, 'audit.systemReason.orderPaid' | 'audit.systemReason.orderPaidKind' | 'audit.systemReason.orderRefunded' | 'audit.systemReason.applicationApproved' | 'audit.systemReason.applicationApprovedAutomatically' | 'audit.systemReason.periodEnded', string | null][] = [
  [/^Order (\S+) paid\.$/, 'audit.systemReason.orderPaid', '/admin/orders'],
  [/^Order (\S+) paid \((start|extend|upgrade|downgrade)\)\.$/, 'audit.systemReason.orderPaidKind', '/admin/orders'],
  [/^Order (\S+) was refunded\.$/, 'audit.systemReason.orderRefunded', '/admin/orders'],
  [/^Application (\S+) approved\.$/, 'audit.systemReason.applicationApproved', '/admin/applications'],
  [/^Application (\S+) approved automatically\.$/, 'audit.systemReason.applicationApprovedAutomatically', '/admin/applications'],
  [/^The package period ended\.()$/, 'audit.systemReason.periodEnded', null],
];

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
  if (entry.targetType === 'order' || entry.targetType === 'application') {
    return (
      <>
        <span className="muted">{kind} </span>
        <Link to={`/admin/${entry.targetType === 'order' ? 'orders' : 'applications'}/${encodeURIComponent(entry.targetId)}`}>
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

export function shortId(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

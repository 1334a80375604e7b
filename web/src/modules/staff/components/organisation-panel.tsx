/**
 * On the staff account page of an organisation account: who its members are (and who is invited), its
 * live `svc_ent_` keys with their allow-lists, and the addresses they connect from. Read-only: keys are
 * the organisation's own to mint and revoke; staff act on the account (package, disable) above.
 */
import { useQuery } from '@apollo/client/react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { ConnectionsTable } from '../../enterprise/components/connections-table.tsx';
import { STAFF_ORGANISATION_QUERY } from '../graphql/staff-organisation.query.ts';
import { AdminSection } from './admin-section.tsx';

export function OrganisationPanel({ organisationId }: { organisationId: string }) {
  const { t } = useTranslation(['enterprise', 'staff']);
  const format = useFormat();
  const { data, loading, error, refetch } = useQuery(STAFF_ORGANISATION_QUERY, { variables: { id: organisationId }, notifyOnNetworkStatusChange: true });
  const organisation = data?.organisation;
  if (error && !data) return <ErrorState title={t('review.organisation.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('review.organisation.loading')} />;
  if (!organisation) return null;
  return (
    <>
      <div className="admin-columns">
        <AdminSection title={t('members.heading')}>
          <div className="table-scroll">
            <table className="admin-table admin-table--rows">
              <thead>
                <tr>
                  <th scope="col">{t('members.columns.email')}</th>
                  <th scope="col">{t('members.columns.role')}</th>
                  <th scope="col">{t('members.columns.added')}</th>
                </tr>
              </thead>
              <tbody>
                {organisation.members.map((member) => (
                  <tr key={member.accountId}>
                    <td>
                      <Link to={`/admin/accounts/${member.accountId}`}>{member.email}</Link>
                    </td>
                    <td>{t(`role.${member.role}`)}</td>
                    <td className="nowrap">{format.dateTime(member.joinedAt)}</td>
                  </tr>
                ))}
                {organisation.invitations.map((invitation) => (
                  <tr key={invitation.id}>
                    <td>
                      {invitation.email} <span className="muted">· {t('members.invitedLabel')}</span>
                    </td>
                    <td>{t(`role.${invitation.role}`)}</td>
                    <td className="nowrap muted">{t('members.invitedOn', { time: format.dateTime(invitation.invitedAt) })}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </AdminSection>
        <AdminSection title={t('keys.heading')}>
          {organisation.keys.length === 0 ? (
            <EmptyState title={t('keys.empty')} compact />
          ) : (
            <div className="table-scroll">
              <table className="admin-table admin-table--rows">
                <thead>
                  <tr>
                    <th scope="col">{t('keys.columns.name')}</th>
                    <th scope="col">{t('keys.columns.key')}</th>
                    <th scope="col">{t('keys.columns.allowList')}</th>
                    <th scope="col">{t('keys.columns.lastUsed')}</th>
                  </tr>
                </thead>
                <tbody>
                  {organisation.keys.map((key) => (
                    <tr key={key.id}>
                      <td>
                        {key.name}
                        <span className="cell-note">{t('staff:account.keys.created', { time: format.dateTime(key.createdAt) })}</span>
                      </td>
                      <td>
                        <code>
                          {key.prefix}…{key.last4}
                        </code>
                      </td>
                      <td>{key.allowedCidrs.length === 0 ? <span className="muted">{t('keys.anywhere')}</span> : <code>{key.allowedCidrs.join(', ')}</code>}</td>
                      <td className="nowrap">{key.lastUsedAt ? format.dateTime(key.lastUsedAt) : t('never')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </AdminSection>
      </div>
      <AdminSection title={t('connections.heading')}>
        {organisation.connections.length === 0 ? (
          <EmptyState title={t('connections.empty')} compact />
        ) : (
          <ConnectionsTable
            connections={organisation.connections}
            className="admin-table admin-table--rows"
            keyCell={(connection) => (
              <>
                {connection.keyName} <code className="muted">{connection.keyPrefix}…</code>
              </>
            )}
          />
        )}
      </AdminSection>
    </>
  );
}

/** Marks an organisation's account in its header. */
export function OrganisationBadge() {
  const { t } = useTranslation('enterprise');
  return <span className="role role--organisation">{t('review.organisation.badge')}</span>;
}

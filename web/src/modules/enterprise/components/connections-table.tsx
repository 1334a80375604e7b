/** Where an organisation's keys are used from, a row an address: the console and the staff account page both draw it. */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import type { OrganisationConnectionFragment } from '../graphql/organisation-connection.fragment.ts';

export function ConnectionsTable({
  connections,
  className,
  label,
  keyCell,
}: {
  connections: readonly OrganisationConnectionFragment[];
  className: string;
  label?: string;
  /** The "key" cell: its name and prefix, as the page knows them. */
  keyCell(connection: OrganisationConnectionFragment): ReactNode;
}) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  return (
    <div className="table-scroll">
      <table className={className} aria-label={label}>
        <thead>
          <tr>
            <th scope="col">{t('connections.columns.key')}</th>
            <th scope="col">{t('connections.columns.ip')}</th>
            <th scope="col">{t('connections.columns.firstSeen')}</th>
            <th scope="col">{t('connections.columns.lastSeen')}</th>
            <th scope="col" className="num">
              {t('connections.columns.requests')}
            </th>
          </tr>
        </thead>
        <tbody>
          {connections.map((connection) => (
            <tr key={`${connection.keyId}-${connection.ip}`} data-ip={connection.ip}>
              <td>{keyCell(connection)}</td>
              <td>
                <code>{connection.ip}</code>
              </td>
              <td className="nowrap">{format.dateTime(connection.firstSeenAt)}</td>
              <td className="nowrap">{format.dateTime(connection.lastSeenAt)}</td>
              <td className="num" data-testid="connection-requests">
                {format.integer(connection.requestCount)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

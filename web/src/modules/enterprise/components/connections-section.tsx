/**
 * Where the organisation's keys are used from: per key, each address with when it was first and last
 * seen and how many requests came from it — pushed live while a server uses the key.
 */
import { useId } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { EmptyState } from '../../shell/components/query-state.tsx';
import type { OrganisationConsole } from '../graphql/organisation-console.query.ts';
import type { LiveStatus } from '../hooks/use-organisation-console.ts';
import { LiveBadge } from './console-page.tsx';

export function ConnectionsSection({ organisation, live }: { organisation: OrganisationConsole; live: LiveStatus }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const id = useId();
  const keys = new Map(organisation.keys.map((key) => [key.id, key]));
  const connections = [...organisation.connections].sort((a, b) => Date.parse(b.lastSeenAt) - Date.parse(a.lastSeenAt));
  return (
    <section className="section console-section" aria-labelledby={`${id}-heading`}>
      <div className="section__head console-section__head">
        <div>
          <h2 id={`${id}-heading`}>{t('connections.heading')}</h2>
          <p className="muted">
            <Trans t={t} i18nKey="connections.intro" components={{ docs: <Link to="/docs/enterprise#ip-audit" /> }} />
          </p>
        </div>
        <LiveBadge status={live} />
      </div>
      {connections.length === 0 ? (
        <EmptyState title={t('connections.empty')}>
          <p className="muted">{t('connections.emptyHint')}</p>
        </EmptyState>
      ) : (
        <div className="table-scroll">
          <table className="data-table console-table" aria-label={t('connections.heading')}>
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
              {connections.map((connection) => {
                const key = keys.get(connection.keyId);
                return (
                  <tr key={`${connection.keyId}-${connection.ip}`} data-ip={connection.ip}>
                    <td>
                      {connection.keyName}{' '}
                      <code className="muted">
                        {key ? `${key.prefix}…${key.last4}` : `${connection.keyPrefix}…`}
                      </code>
                      {!key && <span className="cell-note">{t('connections.revokedKey')}</span>}
                    </td>
                    <td>
                      <code>{connection.ip}</code>
                    </td>
                    <td className="nowrap">{format.dateTime(connection.firstSeenAt)}</td>
                    <td className="nowrap">{format.dateTime(connection.lastSeenAt)}</td>
                    <td className="num" data-testid="connection-requests">
                      {format.integer(connection.requestCount)}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/**
 * Where the organisation's keys are used from: per key, each address with when it was first and last
 * seen and how many requests came from it — pushed live while a server uses the key.
 */
import { useId } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { EmptyState } from '../../shell/components/query-state.tsx';
import type { OrganisationConsole } from '../graphql/organisation-console.query.ts';
import { LiveBadge, type LiveStatus } from '../../shell/components/live-badge.tsx';
import { ConnectionsTable } from './connections-table.tsx';

export function ConnectionsSection({ organisation, live }: { organisation: OrganisationConsole; live: LiveStatus }) {
  const { t } = useTranslation('enterprise');
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
        <LiveBadge status={live} label={t(`live.${live}`)} />
      </div>
      {connections.length === 0 ? (
        <EmptyState title={t('connections.empty')}>
          <p className="muted">{t('connections.emptyHint')}</p>
        </EmptyState>
      ) : (
        <ConnectionsTable
          connections={connections}
          className="data-table console-table"
          label={t('connections.heading')}
          keyCell={(connection) => {
            const key = keys.get(connection.keyId);
            return (
              <>
                {connection.keyName}{' '}
                <code className="muted">{key ? `${key.prefix}…${key.last4}` : `${connection.keyPrefix}…`}</code>
                {!key && <span className="cell-note">{t('connections.revokedKey')}</span>}
              </>
            );
          }}
        />
      )}
    </section>
  );
}

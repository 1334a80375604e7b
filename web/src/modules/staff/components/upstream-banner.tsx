/**
 * The admin app's banner about the model servers chat goes to: none configured (what to set), one not
 * answering (which, and why), or — calmly — the one svc found on this machine at start. Live: the server
 * checks while this is open and pushes each change (`upstreamStatusChanged`), so the banner goes away by
 * itself once a model server answers. Nothing is shown while everything answers as configured.
 */
import { useApolloClient, useQuery, useSubscription } from '@apollo/client/react';
import { Trans, useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import type { UpstreamStatusFragment } from '../graphql/upstream-status.fragment.ts';
import { UPSTREAM_STATUS_CHANGED_SUBSCRIPTION } from '../graphql/upstream-status-changed.subscription.ts';
import { UPSTREAM_STATUS_QUERY } from '../graphql/upstream-status.query.ts';

export function UpstreamBanner() {
  const client = useApolloClient();
  const query = useQuery(UPSTREAM_STATUS_QUERY);
  useSubscription(UPSTREAM_STATUS_CHANGED_SUBSCRIPTION, {
    onData: ({ data }) => {
      const fresh = data.data?.upstreamStatusChanged;
      if (fresh) client.writeQuery({ query: UPSTREAM_STATUS_QUERY, data: { upstreamStatus: fresh } });
    },
  });
  const status = query.data?.upstreamStatus;
  if (!status || (status.configured && status.answering && status.source !== 'discovered')) return null;
  return (
    <div className="admin-banner">
      {!status.configured ? <NotConfigured status={status} /> : !status.answering ? <NotAnswering status={status} /> : <Discovered status={status} />}
    </div>
  );
}

const code = { code: <code /> };

function NotConfigured({ status }: { status: UpstreamStatusFragment }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  return (
    <div className="upstream-banner upstream-banner--alert" role="alert">
      <p className="upstream-banner__title">{t('upstream.none.title')}</p>
      <p>
        <Trans t={t} i18nKey="upstream.none.body" components={code} />
      </p>
      <p>
        <Trans t={t} i18nKey="upstream.none.set" components={code} />
      </p>
      {status.discoveryPorts.length > 0 && <p className="upstream-banner__note">{t('upstream.none.searched', { ports: format.list(status.discoveryPorts.map(String)) })}</p>}
    </div>
  );
}

function NotAnswering({ status }: { status: UpstreamStatusFragment }) {
  const { t } = useTranslation('staff');
  const silent = status.upstreams.filter((upstream) => !upstream.answering);
  return (
    <div className="upstream-banner upstream-banner--alert" role="alert">
      <p className="upstream-banner__title">{t('upstream.down.title', { count: silent.length })}</p>
      <ul>
        {silent.map((upstream) => (
          <li key={`${upstream.label} ${upstream.baseUrl}`}>
            <Trans
              t={t}
              i18nKey={`upstream.down.problem.${upstream.problem ?? 'unreachable'}`}
              values={{ label: labelOf(upstream.label, status.source), url: upstream.baseUrl, status: upstream.httpStatus ?? '' }}
              components={code}
            />
          </li>
        ))}
      </ul>
      <p className="upstream-banner__note">{t('upstream.down.note')}</p>
    </div>
  );
}

/** The quick-start upstream has no label of its own: name it by what set it. */
function labelOf(label: string, source: UpstreamStatusFragment['source']): string {
  if (label !== 'default') return label;
  return source === 'discovered' ? 'upstreamDiscovery' : 'SVC_UPSTREAM_URL';
}

function Discovered({ status }: { status: UpstreamStatusFragment }) {
  const { t } = useTranslation('staff');
  const url = status.upstreams[0]?.baseUrl ?? '';
  return (
    <div className="upstream-banner upstream-banner--info" role="status">
      <p>
        <Trans t={t} i18nKey="upstream.discovered" values={{ url }} components={code} />
      </p>
    </div>
  );
}

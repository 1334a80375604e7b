/**
 * `/enterprise/console`: one organisation — its plan (owners and admins upgrade it through checkout, the
 * organisation paying), its keys, the addresses they connect from (live), its members, and its pools and
 * recent requests drawn as on `/account/usage`. Owners and admins manage keys and members; members see the
 * same page read-only. A member of several organisations switches with `?org=`.
 */
import { useQuery } from '@apollo/client/react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { useMe } from '../../account/hooks/use-me.ts';
import { usePlanText } from '../../plan/components/plan-labels.ts';
import type { LiveStatus } from '../../shell/components/live-badge.tsx';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { ORGANISATIONS_QUERY, type ListedOrganisation } from '../graphql/organisations.query.ts';
import { useOrganisationConsole } from '../hooks/use-organisation-console.ts';
import { SignInFirst } from './apply-page.tsx';
import { ConnectionsSection } from './connections-section.tsx';
import { KeysSection } from './keys-section.tsx';
import { MembersSection } from './members-section.tsx';
import { OrganisationPlanSection } from './organisation-plan-section.tsx';
import { OrganisationUsageSection } from './organisation-usage-section.tsx';
import '../../account/components/account.css';
import './enterprise.css';

export function ConsolePage() {
  const { t } = useTranslation(['enterprise', 'shell']);
  const { me, loading, error, retry } = useMe();
  return (
    <div className="container page enterprise-page">
      <title>{t('shell:pageTitle', { page: t('console.title') })}</title>
      {error ? (
        <ErrorState title={t('loadError')} error={error} onRetry={retry} retrying={loading} />
      ) : me === undefined ? (
        <LoadingState label={t('checkingSession')} />
      ) : me === null ? (
        <>
          <ConsoleHeading />
          <SignInFirst />
        </>
      ) : (
        <Organisations />
      )}
    </div>
  );
}

function ConsoleHeading({ children }: { children?: React.ReactNode }) {
  const { t } = useTranslation('enterprise');
  return (
    <header className="page-header console-header">
      <div>
        <p className="eyebrow">{t('eyebrow')}</p>
        <h1>{t('console.title')}</h1>
      </div>
      {children}
    </header>
  );
}

function Organisations() {
  const { t } = useTranslation('enterprise');
  // Cache and network: coming back from a checkout, the organisation's package has changed.
  const { data, loading, error, refetch } = useQuery(ORGANISATIONS_QUERY, { fetchPolicy: 'cache-and-network', notifyOnNetworkStatusChange: true });
  const [params, setParams] = useSearchParams();
  if (error && !data)
    return (
      <>
        <ConsoleHeading />
        <ErrorState title={t('console.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      </>
    );
  if (!data)
    return (
      <>
        <ConsoleHeading />
        <LoadingState label={t('console.loading')} />
      </>
    );
  const organisations = data.organisations;
  if (organisations.length === 0)
    return (
      <>
        <ConsoleHeading />
        <div className="state state--empty">
          <p className="state__title">{t('console.none.title')}</p>
          <p>{t('console.none.body')}</p>
          <div className="actions">
            <Link className="button" to="/enterprise/apply">
              {t('console.none.apply')}
            </Link>
            <Link className="button button--ghost" to="/docs/enterprise">
              {t('console.none.docs')}
            </Link>
          </div>
        </div>
      </>
    );
  const asked = params.get('org');
  const current = organisations.find((organisation) => organisation.id === asked) ?? organisations[0]!;
  return (
    <>
      <ConsoleHeading>
        {organisations.length > 1 && (
          <label className="field org-switch">
            <span>{t('console.switch')}</span>
            <select value={current.id} onChange={(event) => setParams({ org: event.target.value })}>
              {organisations.map((organisation) => (
                <option key={organisation.id} value={organisation.id}>
                  {organisation.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </ConsoleHeading>
      <OrganisationConsoleView key={current.id} organisation={current} />
    </>
  );
}

function OrganisationConsoleView({ organisation }: { organisation: ListedOrganisation }) {
  const { t } = useTranslation('enterprise');
  const state = useOrganisationConsole(organisation.id);
  const data = state.data?.organisation;
  return (
    <>
      <OrganisationSummary organisation={organisation} live={state.live} />
      {state.error && !state.data ? (
        <ErrorState title={t('console.loadError')} error={state.error} onRetry={() => void state.refetch().catch(() => undefined)} retrying={state.loading} />
      ) : !state.data ? (
        <LoadingState label={t('console.loading')} />
      ) : !data ? (
        <div className="state state--empty">
          <p className="state__title">{t('console.gone.title')}</p>
          <p>{t('console.gone.body')}</p>
        </div>
      ) : (
        <>
          <OrganisationPlanSection organisation={organisation} />
          <KeysSection organisation={data} />
          <ConnectionsSection organisation={data} live={state.live} />
          <MembersSection organisation={data} />
          <OrganisationUsageSection organisation={data} />
        </>
      )}
    </>
  );
}

function OrganisationSummary({ organisation, live }: { organisation: ListedOrganisation; live: LiveStatus }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const text = usePlanText();
  // The organisation's own plan comes with it: the public catalogue leaves out enterprise, which members cannot look up.
  const pkg = organisation.plan?.packages.find((candidate) => candidate.id === organisation.packageId);
  const packageName = organisation.plan && pkg ? text.packageLabel(organisation.plan, pkg) : organisation.packageId;
  return (
    <section className="org-summary" aria-label={t('console.summaryLabel')}>
      <div className="org-summary__name">
        <h2>{organisation.name}</h2>
        {organisation.viewerRole && <span className={`org-role org-role--${organisation.viewerRole}`}>{t(`role.${organisation.viewerRole}`)}</span>}
      </div>
      <p className="muted">
        <Trans
          t={t}
          i18nKey="console.summary"
          values={{ package: packageName, since: format.dateTime(organisation.createdAt) }}
          components={{ strong: <strong /> }}
        />
      </p>
      {organisation.viewerCanReadStatements && (
        <p className="actions org-summary__links">
          <Link className="button button--ghost" to={`/enterprise/console/statement?org=${encodeURIComponent(organisation.id)}`}>
            {t('console.statementLink')}
          </Link>
          <Link className="button button--ghost" to={`/account/credits?org=${encodeURIComponent(organisation.id)}`}>
            {t('console.creditLink')}
          </Link>
        </p>
      )}
      {organisation.viewerRole === null ? (
        <p className="notice notice--info" role="note">
          {t('console.staffView')}
        </p>
      ) : (
        !organisation.viewerCanManageKeys && (
          <p className="notice notice--info" role="note">
            {t('console.readOnly')}
          </p>
        )
      )}
      {live === 'interrupted' && (
        <p className="notice notice--warn" role="status">
          {t('console.liveInterrupted')}
        </p>
      )}
    </section>
  );
}

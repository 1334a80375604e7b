/** Pieces the applicant's page and the staff review pages share: the state badge, the timeline, the submitted facts. */
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import type { EnterpriseApplicationEventFragment, EnterpriseApplicationFragment, EnterpriseApplicationState } from '../graphql/enterprise-application.fragment.ts';
import { useCountryName } from '../hooks/use-countries.ts';

export function ApplicationStateBadge({ state }: { state: EnterpriseApplicationState }) {
  const { t } = useTranslation('enterprise');
  return (
    <span className={`app-state app-state--${state}`} data-state={state}>
      {t(`state.${state}`)}
    </span>
  );
}

/**
 * Every change, oldest first: what happened, when, who did it, and their note. The applicant reads their
 * own steps as "you"; staff see the applicant's address.
 */
export function ApplicationTimeline({ events, viewer }: { events: EnterpriseApplicationEventFragment[]; viewer: 'applicant' | 'staff' }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  return (
    <ol className="timeline">
      {events.map((event) => (
        <li key={event.id} className={`timeline__item timeline__item--${event.action}`}>
          <span className="timeline__dot" aria-hidden="true" />
          <div className="timeline__body">
            <p className="timeline__what">
              <strong>{t(`timeline.${event.action}`)}</strong>
              <span className="muted">
                {' · '}
                <time dateTime={event.at}>{format.dateTime(event.at)}</time>
                {' · '}
                {event.actorKind === 'system'
                  ? t('timeline.bySvc')
                  : event.actorKind === 'applicant'
                    ? viewer === 'applicant' || event.actorEmail === null
                      ? t('timeline.byYou')
                      : t('timeline.byApplicant', { email: event.actorEmail })
                    : event.actorEmail === null
                      ? t('timeline.byStaff')
                      : t('timeline.by', { email: event.actorEmail })}
              </span>
            </p>
            {event.note && <p className="timeline__note">{event.note}</p>}
          </div>
        </li>
      ))}
    </ol>
  );
}

/** What the applicant submitted, as a definition list. */
export function ApplicationFacts({ application }: { application: EnterpriseApplicationFragment }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const countryName = useCountryName();
  return (
    <dl className="app-facts">
      <div>
        <dt>{t('fields.organisation')}</dt>
        <dd>{application.organisation}</dd>
      </div>
      <div>
        <dt>{t('fields.kind')}</dt>
        <dd>{t(`kind.${application.kind}.name`)}</dd>
      </div>
      <div>
        <dt>{t('fields.contactEmail')}</dt>
        <dd>{application.contactEmail}</dd>
      </div>
      <div>
        <dt>{t('fields.website')}</dt>
        <dd>
          {application.website ? (
            <a href={application.website} rel="noreferrer noopener" target="_blank">
              {application.website}
            </a>
          ) : (
            <span className="muted">{t('fields.none')}</span>
          )}
        </dd>
      </div>
      <div>
        <dt>{t('fields.country')}</dt>
        <dd>{countryName(application.country)}</dd>
      </div>
      <div>
        <dt>{t('fields.expectedMonthlyTokens')}</dt>
        <dd>{t('fields.tokensPerMonth', { tokens: format.integer(application.expectedMonthlyTokens) })}</dd>
      </div>
      <div className="app-facts__wide">
        <dt>{t('fields.useCase')}</dt>
        <dd className="app-facts__text">{application.useCase}</dd>
      </div>
    </dl>
  );
}

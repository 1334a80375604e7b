/**
 * The console's plan section: the organisation's paid period and, for its owner and admins, the packages
 * it can move to — each button opens the same dialog and checkout page as a member's, with the
 * organisation as the payer. A package staff set (enterprise, not on sale) is changed by staff only.
 */
import { useQuery } from '@apollo/client/react';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { PlanOptions } from '../../billing/components/plan-options.tsx';
import { SUBSCRIPTION_QUERY } from '../../billing/graphql/subscription.query.ts';
import { usePlans } from '../../plan/hooks/use-plans.ts';
import type { ListedOrganisation } from '../graphql/organisations.query.ts';

export function OrganisationPlanSection({ organisation }: { organisation: ListedOrganisation }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const id = useId();
  const { plans } = usePlans();
  const manages = organisation.viewerCanManageBilling;
  const { data } = useQuery(SUBSCRIPTION_QUERY, { variables: { organisationId: organisation.id }, skip: !manages, fetchPolicy: 'cache-and-network' });
  const subscription = data?.subscription;
  const running = subscription && subscription.state !== 'expired' ? subscription : null;
  const end = running ? format.dateTime(running.currentPeriodEnd) : null;
  const onSale = plans?.some((plan) => plan.packages.some((pkg) => pkg.id === organisation.packageId));
  return (
    <section className="section" aria-labelledby={`${id}-heading`} data-testid="organisation-plan">
      <div className="section__head">
        <h2 id={`${id}-heading`}>{t('console.plan.heading')}</h2>
        {end && <p className="muted">{t('console.plan.ends', { date: end })}</p>}
      </div>
      {!manages ? (
        <p className="muted">{t('console.plan.askOwner')}</p>
      ) : onSale === false ? (
        <p className="muted">{t('console.plan.staffSet')}</p>
      ) : (
        <>
          <p>{t('console.plan.body')}</p>
          <PlanOptions currentPackage={running?.packageId ?? organisation.packageId} organisationId={organisation.id} />
        </>
      )}
    </section>
  );
}

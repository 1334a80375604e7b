/** `/account`'s plan section: the current period in one line, the packages to move to, and the way to billing. */
import { useQuery } from '@apollo/client/react';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { SUBSCRIPTION_QUERY } from '../graphql/subscription.query.ts';
import { PlanOptions } from './plan-options.tsx';
import './billing.css';

export function AccountPlanSection({ packageId }: { packageId: string }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const id = useId();
  const { data } = useQuery(SUBSCRIPTION_QUERY, { fetchPolicy: 'cache-and-network' });
  const subscription = data?.subscription;
  const running = subscription && subscription.state !== 'expired' ? subscription : null;
  const end = running ? format.dateTime(running.currentPeriodEnd) : null;
  return (
    <section className="section" aria-labelledby={`${id}-heading`} data-testid="account-plan">
      <div className="section__head">
        <h2 id={`${id}-heading`}>{t('account.heading')}</h2>
        {end && <p className="muted">{t('account.ends', { date: end })}</p>}
      </div>
      <PlanOptions currentPackage={running?.packageId ?? packageId} />
      <p>
        <Link to="/account/billing">{t('account.billingLink')}</Link>
      </p>
    </section>
  );
}

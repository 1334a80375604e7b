import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import type { PlanFragment } from '../graphql/plan.fragment.ts';
import type { PlanPackageFragment } from '../graphql/plan-package.fragment.ts';
import { modelClasses, usePlanText } from './plan-labels.ts';

export function PlanCard({ plan }: { plan: PlanFragment }) {
  const { t } = useTranslation('plan');
  const text = usePlanText();
  const headingId = `plan-${plan.id}`;
  const name = text.planName(plan);
  return (
    <article className="plan-card" aria-labelledby={headingId} data-plan={plan.id}>
      <h3 id={headingId} className="plan-card__name">
        {name}
      </h3>
      <p className="plan-card__description">{text.planDescription(plan)}</p>
      <ul className="plan-card__packages">
        {plan.packages.map((pkg) => (
          <PackageOffer key={pkg.id} plan={plan} pkg={pkg} />
        ))}
      </ul>
      <p className="plan-card__rate">{t('card.requestsPerMinute', { count: plan.requestsPerMinute })}</p>
      <Link to="/account" className="button plan-card__cta">
        {plan.packages.every((pkg) => pkg.price.amountMicros === 0) ? t('card.startFree') : t('card.get', { plan: name })}
      </Link>
    </article>
  );
}

function PackageOffer({ plan, pkg }: { plan: PlanFragment; pkg: PlanPackageFragment }) {
  const { t } = useTranslation('plan');
  const format = useFormat();
  const text = usePlanText();
  const showName = pkg.name !== plan.name;
  const daily = modelClasses.map((cls) => ({ cls, pool: pkg.pools.find((pool) => pool.class === cls && pool.window === 'day') }));
  return (
    <li className="package" data-package={pkg.id}>
      {(showName || pkg.multiplier > 1) && (
        <div className="package__head">
          {showName && <span className="package__name">{text.packageName(pkg)}</span>}
          {pkg.multiplier > 1 && (
            <span className="badge" title={t('card.multiplierTitle', { multiplier: pkg.multiplier })}>
              {t('card.multiplier', { multiplier: pkg.multiplier })}
            </span>
          )}
        </div>
      )}
      <p className="price">
        <span className="price__amount">{format.money(pkg.price)}</span> <span className="price__interval">{text.perInterval(pkg.interval)}</span>
      </p>
      <dl className="package__daily">
        {daily.map(({ cls, pool }) =>
          pool ? (
            <div key={cls}>
              <dt>{text.className(cls)}</dt>
              <dd>{t('card.perDay', { amount: format.money(pool.limit) })}</dd>
            </div>
          ) : null,
        )}
      </dl>
    </li>
  );
}

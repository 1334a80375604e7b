import { Link } from 'react-router';
import { formatInteger, formatMoney } from '../../../lib/format.ts';
import type { PlanFragment } from '../graphql/plan.fragment.ts';
import type { PlanPackageFragment } from '../graphql/plan-package.fragment.ts';
import { classLabels, modelClasses } from './plan-labels.ts';

export function PlanCard({ plan }: { plan: PlanFragment }) {
  const headingId = `plan-${plan.id}`;
  return (
    <article className="plan-card" aria-labelledby={headingId} data-plan={plan.id}>
      <h3 id={headingId} className="plan-card__name">
        {plan.name}
      </h3>
      <p className="plan-card__description">{plan.description}</p>
      <ul className="plan-card__packages">
        {plan.packages.map((pkg) => (
          <PackageOffer key={pkg.id} plan={plan} pkg={pkg} />
        ))}
      </ul>
      <p className="plan-card__rate">{formatInteger(plan.requestsPerMinute)} requests / minute</p>
      <Link to="/account" className="button plan-card__cta">
        {plan.packages.every((pkg) => pkg.price.amountMicros === 0) ? 'Start for free' : `Get ${plan.name}`}
      </Link>
    </article>
  );
}

function PackageOffer({ plan, pkg }: { plan: PlanFragment; pkg: PlanPackageFragment }) {
  const showName = pkg.name !== plan.name;
  const daily = modelClasses.map((cls) => ({ cls, pool: pkg.pools.find((pool) => pool.class === cls && pool.window === 'day') }));
  return (
    <li className="package" data-package={pkg.id}>
      {(showName || pkg.multiplier > 1) && (
        <div className="package__head">
          {showName && <span className="package__name">{pkg.name}</span>}
          {pkg.multiplier > 1 && (
            <span className="badge" title={`${pkg.multiplier} times the plan's base pools`}>
              ×{pkg.multiplier} pools
            </span>
          )}
        </div>
      )}
      <p className="price">
        <span className="price__amount">{formatMoney(pkg.price)}</span> <span className="price__interval">/ {pkg.interval}</span>
      </p>
      <dl className="package__daily">
        {daily.map(({ cls, pool }) =>
          pool ? (
            <div key={cls}>
              <dt>{classLabels[cls]}</dt>
              <dd>{formatMoney(pool.limit)} / day</dd>
            </div>
          ) : null,
        )}
      </dl>
    </li>
  );
}

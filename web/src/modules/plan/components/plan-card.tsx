import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import type { PlanFragment } from '../graphql/plan.fragment.ts';
import type { PlanPackageFragment } from '../graphql/plan-package.fragment.ts';
import { UpgradeButton, type UpgradeKind } from '../../billing/components/upgrade-button.tsx';
import { modelClasses, usePlanText } from './plan-labels.ts';

/**
 * What buying a package would do for the reader: `kinds` maps a purchasable package to upgrade, switch or
 * renew (signed in), `current` is their package; both null when signed out (the buttons lead to sign-in).
 */
export interface Purchase {
  current: string | null;
  kinds: Map<string, UpgradeKind> | null;
}

export function PlanCard({ plan, purchase = { current: null, kinds: null } }: { plan: PlanFragment; purchase?: Purchase }) {
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
          <PackageOffer key={pkg.id} plan={plan} pkg={pkg} purchase={purchase} withButton={plan.packages.length > 1} />
        ))}
      </ul>
      <p className="plan-card__rate">{t('card.requestsPerMinute', { count: plan.requestsPerMinute })}</p>
      {plan.packages.length === 1 && buyable(plan.packages[0]!) ? (
        <BuyButton plan={plan} pkg={plan.packages[0]!} purchase={purchase} className="button plan-card__cta" />
      ) : plan.packages.length > 1 && plan.packages.some(buyable) ? null : purchase.current !== null && plan.packages.some((pkg) => pkg.id === purchase.current) ? (
        <p className="plan-card__current">{t('card.current')}</p>
      ) : (
        <Link to="/account" className="button plan-card__cta">
          {plan.packages.every((pkg) => pkg.price.amountMicros === 0) ? t('card.startFree') : t('card.get', { plan: name })}
        </Link>
      )}
    </article>
  );
}

/** A package with a checkout price can be bought here. */
function buyable(pkg: PlanPackageFragment): boolean {
  return pkg.price.amountMicros > 0 && pkg.prices.length > 0;
}

function BuyButton({ plan, pkg, purchase, className }: { plan: PlanFragment; pkg: PlanPackageFragment; purchase: Purchase; className: string }) {
  const text = usePlanText();
  return (
    <UpgradeButton
      target={{ packageId: pkg.id, name: text.packageLabel(plan, pkg), prices: pkg.prices }}
      kind={purchase.kinds?.get(pkg.id) ?? 'upgrade'}
      signedIn={purchase.kinds !== null}
      className={className}
    />
  );
}

function PackageOffer({ plan, pkg, purchase, withButton }: { plan: PlanFragment; pkg: PlanPackageFragment; purchase: Purchase; withButton: boolean }) {
  const { t } = useTranslation('plan');
  const format = useFormat();
  const text = usePlanText();
  const showName = pkg.name !== plan.name;
  const others = pkg.prices.filter((price) => price.currency !== pkg.price.currency);
  const daily = modelClasses.map((cls) => ({ cls, pool: pkg.pools.find((pool) => pool.class === cls && pool.window === 'day') }));
  return (
    <li className="package" data-package={pkg.id}>
      {(showName || pkg.multiplier > 1 || purchase.current === pkg.id) && (
        <div className="package__head">
          {showName && <span className="package__name">{text.packageName(pkg)}</span>}
          {purchase.current === pkg.id && <span className="badge badge--current">{t('card.yours')}</span>}
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
      {others.length > 0 && (
        <p className="price__also" data-testid="other-prices">
          {t('card.alsoIn', { prices: format.alternatives(others.map((price) => format.money(price))) })}
        </p>
      )}
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
      {withButton && buyable(pkg) && <BuyButton plan={plan} pkg={pkg} purchase={purchase} className="button button--ghost package__cta" />}
    </li>
  );
}

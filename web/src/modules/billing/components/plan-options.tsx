/**
 * The paid packages a member can move to, each with its Upgrade (or Switch, or Renew) button: on
 * `/account` and `/account/billing`, and on `/enterprise/console` for an organisation (it pays). Priced
 * from the catalogue in every currency it has.
 */
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { usePlanText } from '../../plan/components/plan-labels.ts';
import type { PlanPackageFragment } from '../../plan/graphql/plan-package.fragment.ts';
import type { PlanFragment } from '../../plan/graphql/plan.fragment.ts';
import { usePlans } from '../../plan/hooks/use-plans.ts';
import { UpgradeButton, type UpgradeKind } from './upgrade-button.tsx';

export interface Offer {
  plan: PlanFragment;
  pkg: PlanPackageFragment;
  kind: UpgradeKind;
}

/** Every package with a checkout price, and what buying it would do for someone on `currentPackage`. */
export function offersFor(plans: PlanFragment[], currentPackage: string): Offer[] {
  const all = plans.flatMap((plan) => plan.packages.map((pkg) => ({ plan, pkg })));
  const current = all.find((entry) => entry.pkg.id === currentPackage)?.pkg;
  return all
    .filter(({ pkg }) => pkg.prices.length > 0 && pkg.price.amountMicros > 0)
    .map(({ plan, pkg }) => ({
      plan,
      pkg,
      kind: pkg.id === currentPackage ? 'renew' : !current || pkg.price.amountMicros > current.price.amountMicros ? 'upgrade' : 'switch',
    }));
}

export function PlanOptions({ currentPackage, organisationId = null }: { currentPackage: string; organisationId?: string | null }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const text = usePlanText();
  const { plans } = usePlans();
  if (!plans) return null;
  const offers = offersFor(plans, currentPackage);
  if (offers.length === 0) return null;
  return (
    <ul className="plan-options" aria-label={t('options.label')}>
      {offers.map(({ plan, pkg, kind }) => {
        const name = text.packageLabel(plan, pkg);
        return (
          <li key={pkg.id} className="plan-option" data-package={pkg.id}>
            <span className="plan-option__name">{name}</span>
            <span className="plan-option__prices">
              {t('options.prices', { prices: pkg.prices.map((price) => format.money(price)).join(' · '), interval: text.perInterval(pkg.interval) })}
            </span>
            <UpgradeButton
              target={{ packageId: pkg.id, name, prices: pkg.prices }}
              kind={kind}
              signedIn
              organisationId={organisationId}
              className={kind === 'upgrade' ? 'button' : 'button button--ghost'}
            />
          </li>
        );
      })}
    </ul>
  );
}

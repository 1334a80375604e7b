import { useTranslation } from 'react-i18next';
import { useCatalogueLookup, useCatalogueText } from '../../../lib/catalogue-text.ts';
import type { ModelClass, PlanPackageFragment, PoolWindow } from '../graphql/plan-package.fragment.ts';
import type { PlanFragment } from '../graphql/plan.fragment.ts';
import { usePlans } from '../hooks/use-plans.ts';

export const modelClasses: readonly ModelClass[] = ['fast', 'premium'];
export const poolWindows: readonly PoolWindow[] = ['day', 'week', 'month'];

/** How plans, packages, classes and windows are named in the reader's language (also used by usage). */
export function usePlanText() {
  const { t } = useTranslation('plan');
  const catalogue = useCatalogueText('plan');
  // Naming needs ids and names only: a plan fetched just for its name (an organisation's) will do.
  const planName = (plan: Pick<PlanFragment, 'name'> & { id: string }) => catalogue(['plans', plan.id, 'name'], plan.name);
  const packageName = (pkg: Pick<PlanPackageFragment, 'id' | 'name'>) => catalogue(['packages', pkg.id, 'name'], pkg.name);
  return {
    className: (cls: ModelClass) => t(`class.${cls}`),
    windowLabel: (window: PoolWindow) => t(`window.${window}`),
    windowReset: (window: PoolWindow) => t(`reset.${window}`),
    planName,
    planDescription: (plan: PlanFragment) => catalogue(['plans', plan.id, 'description'], plan.description),
    packageName,
    /** A plan with one package is named by the plan ("Pro"); Max's packages by their own names ("Max x5"). */
    packageLabel: (plan: Pick<PlanFragment, 'name'> & { id: string; packages: readonly unknown[] }, pkg: Pick<PlanPackageFragment, 'id' | 'name'>) => (plan.packages.length > 1 ? packageName(pkg) : planName(plan)),
    /** "/ month" after a price; an interval the catalogue does not know is shown as the server names it. */
    perInterval: (interval: string) => (interval === 'month' ? t('interval.month') : t('interval.other', { interval })),
  };
}

/**
 * A package id as people know it ("free" → "Free" / "免费版", "max_x5" → "Max x5"). Until the server's
 * catalogue is loaded (or for a package it no longer lists): the built-in name in the reader's language —
 * a package with its plan's id is named by the plan, as `packageLabel` does — else the id.
 */
export function usePackageName(): (packageId: string) => string {
  const { plans } = usePlans();
  const text = usePlanText();
  const builtIn = useCatalogueLookup('plan');
  return (packageId) => {
    for (const plan of plans ?? []) {
      const pkg = plan.packages.find((candidate) => candidate.id === packageId);
      if (pkg) return text.packageLabel(plan, pkg);
    }
    return builtIn(['plans', packageId, 'name']) ?? builtIn(['packages', packageId, 'name']) ?? packageId;
  };
}

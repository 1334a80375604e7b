import type { ModelClass, PoolWindow } from '../graphql/plan-package.fragment.ts';
import type { PlanFragment } from '../graphql/plan.fragment.ts';
import type { PlanPackageFragment } from '../graphql/plan-package.fragment.ts';

export const modelClasses: readonly ModelClass[] = ['fast', 'premium'];
export const poolWindows: readonly PoolWindow[] = ['day', 'week', 'month'];

export const classLabels: Record<ModelClass, string> = { fast: 'Fast / Light', premium: 'Standard / Flagship' };
export const windowLabels: Record<PoolWindow, string> = { day: 'Per day', week: 'Per week', month: 'Per month' };
export const windowResets: Record<PoolWindow, string> = {
  day: 'resets at midnight, service time',
  week: 'resets on Monday',
  month: 'resets on the 1st',
};

/** A plan with one package is named by the plan ("Pro"); Max's packages by their own names ("Max x5"). */
export function packageLabel(plan: PlanFragment, pkg: PlanPackageFragment): string {
  return plan.packages.length > 1 ? pkg.name : plan.name;
}

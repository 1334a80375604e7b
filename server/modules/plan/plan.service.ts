/**
 * The public plan catalogue (Free, Pro, Max and its x5/x20 packages) with the usage pools each package
 * includes, per model class and window (from the entitlements). Read from config; GraphQL `plans` and REST
 * `GET /api/membership/plans` both return `PlanService.list()`.
 */
import { modelClasses, poolWindows, type Config, type ModelClass, type PlanId, type PoolWindow } from '../../config/config.ts';
import { money, type Money } from '../../config/money.ts';
import { allPlanIds, planIds, type EntitlementCatalogue } from './entitlements.ts';

export interface Pool {
  class: ModelClass;
  window: PoolWindow;
  limit: Money;
}

export interface PlanPackage {
  id: string;
  name: string;
  price: Money;
  interval: 'month';
  /** How many times the plan's base pools this package includes. */
  multiplier: number;
  pools: Pool[];
}

export interface Plan {
  id: PlanId;
  name: string;
  description: string;
  requestsPerMinute: number;
  packages: PlanPackage[];
}

export class PlanService {
  readonly #plans: Plan[];
  /** With the plans only staff assign (enterprise): what `findPackage` searches. */
  readonly #all: Plan[];

  constructor(config: Config, entitlements: EntitlementCatalogue) {
    this.#all = allPlanIds.map((id) => {
      const plan = config.plans[id];
      return {
        id,
        name: plan.name,
        description: plan.description,
        requestsPerMinute: plan.requestsPerMinute,
        packages: plan.packages.map((pkg) => ({
          id: pkg.id,
          name: pkg.name,
          price: money(pkg.price, config.currency),
          interval: 'month' as const,
          multiplier: pkg.multiplier,
          pools: modelClasses.flatMap((cls) => poolWindows.map((window) => ({ class: cls, window, limit: money(entitlements.of(pkg.id).pools[cls][window], config.currency) }))),
        })),
      };
    });
    this.#plans = this.#all.filter((plan) => planIds.includes(plan.id));
  }

  list(): Plan[] {
    return this.#plans;
  }

  /** Every plan, with those only staff assign (enterprise): for the staff package pickers. */
  listAll(): Plan[] {
    return this.#all;
  }

  /** The package with this id and the plan it belongs to. */
  findPackage(packageId: string): { plan: Plan; pkg: PlanPackage } | undefined {
    for (const plan of this.#all) {
      const pkg = plan.packages.find((candidate) => candidate.id === packageId);
      if (pkg) return { plan, pkg };
    }
    return undefined;
  }
}

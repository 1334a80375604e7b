/**
 * What a plan package allows — the one place that answers it: its pools (the plan's base pools × the
 * package multiplier, per class and window, in micros), the product models it may use, and its requests
 * per minute. Admission, `/v1/models`, the usage report and the public catalogue all read it from here.
 * An unknown package id (a package removed from config) gets the Free plan's entitlements.
 */
import { modelClasses, type Config, type ModelClass, type PlanId, type PoolWindow } from '../../config/config.ts';
import type { Micros } from '../../config/money.ts';

export interface Entitlements {
  planId: PlanId;
  packageId: string;
  requestsPerMinute: number;
  /** Product ids the package may use, in catalogue order. */
  modelIds: readonly string[];
  pools: Record<ModelClass, Record<PoolWindow, Micros>>;
}

/** The plans on the pricing page. */
export const planIds: readonly PlanId[] = ['free', 'pro', 'max'];
/** Every plan, with those only staff assign (`enterprise`, for organisations). */
export const allPlanIds: readonly PlanId[] = [...planIds, 'enterprise'];

export class EntitlementCatalogue {
  readonly #packages = new Map<string, Entitlements & { models: ReadonlySet<string> }>();
  readonly #fallback: Entitlements & { models: ReadonlySet<string> };

  constructor(config: Config) {
    const catalogue = Object.keys(config.models);
    for (const planId of allPlanIds) {
      const plan = config.plans[planId];
      const modelIds = plan.models ? catalogue.filter((id) => plan.models!.includes(id)) : catalogue;
      for (const pkg of plan.packages) {
        const pools = {} as Entitlements['pools'];
        for (const cls of modelClasses) {
          const base = plan.pools[cls];
          pools[cls] = { day: base.day * pkg.multiplier, week: base.week * pkg.multiplier, month: base.month * pkg.multiplier };
        }
        this.#packages.set(pkg.id, { planId, packageId: pkg.id, requestsPerMinute: plan.requestsPerMinute, modelIds, models: new Set(modelIds), pools });
      }
    }
    this.#fallback = this.#packages.get(config.plans.free.packages[0]!.id)!;
  }

  /** Entitlements of a package; an unknown package gets the Free plan's. */
  of(packageId: string): Entitlements {
    return this.#packages.get(packageId) ?? this.#fallback;
  }

  /** Whether the package may use the model. */
  allows(packageId: string, modelId: string): boolean {
    return (this.#packages.get(packageId) ?? this.#fallback).models.has(modelId);
  }

  has(packageId: string): boolean {
    return this.#packages.has(packageId);
  }
}

/**
 * What metering asks of a payer's plan package. The plan module's `EntitlementCatalogue` answers it
 * (`services.ts` passes it in), so the pipeline can be read and tested without the modules above it.
 */
import type { ModelClass, PoolWindow } from '../config/config.ts';
import type { Micros } from '../config/money.ts';

export interface PackageEntitlements {
  of(packageId: string): {
    requestsPerMinute: number;
    /** Product ids the package may use, in catalogue order. */
    modelIds: readonly string[];
    pools: Record<ModelClass, Record<PoolWindow, Micros>>;
  };
  /** Whether the package may use the model. */
  allows(packageId: string, modelId: string): boolean;
}

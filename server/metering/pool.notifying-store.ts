/**
 * Every move of a pool goes through the `PoolStore`: admission reserves, settlement moves reservations to
 * their cost. This wrapper tells a listener (the usage module's `UsageEvents`) which accounts moved, after
 * the store answered and without holding anything up — it hands back the store's own promise, so
 * admission's critical section and settlement's batch take exactly as long as before. Wrapping the store (rather than calling out from the
 * gateway and the settlement queue) keeps the notification next to the one place pools change.
 */
import type { Admission, AdmissionRequest, PoolStore, ReservationRef } from './pool.store.ts';
import type { Micros } from '../config/money.ts';

/** Told which payer's pools moved; `services.ts` passes the usage module's live events in. */
interface PoolListener {
  changed(payerId: string): void;
}

export function notifyingStore(store: PoolStore, events: PoolListener): PoolStore {
  const ignore = () => undefined; // the caller handles the store's failures; this branch only listens
  return {
    admit(request: AdmissionRequest): Promise<Admission> {
      const admission = store.admit(request);
      admission.then((result) => {
        if (result.ok) events.changed(request.payerId);
      }, ignore);
      return admission;
    },
    admitNow: store.admitNow
      ? (request) => {
          const admission = store.admitNow!(request);
          if (admission?.ok) events.changed(request.payerId);
          return admission;
        }
      : undefined,
    settle(items: readonly { ref: ReservationRef; costMicros: Micros }[]): Promise<boolean[]> {
      const settled = store.settle(items);
      // One note per payer per settlement batch, however many of its requests the batch holds.
      settled.then(() => {
        for (const payerId of new Set(items.map((item) => item.ref.payerId))) events.changed(payerId);
      }, ignore);
      return settled;
    },
    checkpoint: (items) => store.checkpoint(items),
    expired: (now, limit) => store.expired(now, limit),
    heartbeat: () => store.heartbeat(),
    orphaned: (limit) => store.orphaned(limit),
    leave: () => store.leave(),
    settleExpired: (requestId, costMicros, payerId) => store.settleExpired(requestId, costMicros, payerId),
    read: (payerId, windows) => store.read(payerId, windows),
    raiseToLedger: store.raiseToLedger ? (floors, windows, keyFloors) => store.raiseToLedger!(floors, windows, keyFloors) : undefined,
    whenUnreconciled: store.whenUnreconciled ? (reconcile) => store.whenUnreconciled!(reconcile) : undefined,
    leaseOf: store.leaseOf ? (requestId) => store.leaseOf!(requestId) : undefined,
    checkpointsOf: store.checkpointsOf ? (refs) => store.checkpointsOf!(refs) : undefined,
    dropCheckpoints: store.dropCheckpoints ? (refs) => store.dropCheckpoints!(refs) : undefined,
    leaseCheckpoints: store.leaseCheckpoints ? (leaseId) => store.leaseCheckpoints!(leaseId) : undefined,
    holdKeyCap: store.holdKeyCap ? (request) => store.holdKeyCap!(request) : undefined,
    releaseKeyCap: store.releaseKeyCap ? (requestId, payerId, costMicros) => store.releaseKeyCap!(requestId, payerId, costMicros) : undefined,
    readKeyCap: store.readKeyCap ? (keyId, payerId, windows) => store.readKeyCap!(keyId, payerId, windows) : undefined,
    close: store.close ? () => store.close!() : undefined,
  };
}

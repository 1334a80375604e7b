/**
 * What metering needs from prepaid credit (modules/credit implements it; services.ts passes it in), apart
 * from admission so that settlement, the sweeper and checkpoints can name it without importing admission.
 */
import type { ModelClass } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import type { LedgerEntry } from './ledger.ts';
import type { ExpiredReservation } from './pool.store.ts';

/**
 * Prepaid credit a payer may have opted to pay with once its pools are exhausted (modules/credit): the
 * worst case spent atomically at admission and held until the turn settles, what it did not use given
 * back then — by its own settlement, or by the sweeper when its instance died (as a pool reservation is).
 */
export interface CreditPayment {
  /** Whether the payer opted in to pay from credit (a capped key's refusal then names the key's cap). */
  paysFromCredit(payerId: string): Promise<boolean>;
  /** Spends `micros` of the payer's credit for the turn and holds it; false when it did not opt in or has too little. */
  reserveTurn(payerId: string, requestId: string, micros: Micros, modelClass: ModelClass): Promise<boolean>;
  /** Gives back `reserved − cost` and ends the hold (once per turn: nothing when the sweeper ended it first). */
  settleTurn(payerId: string, requestId: string, reservedMicros: Micros, costMicros: Micros): Promise<void>;
  /** Records what running credit-paid streams have produced so far (the ledger row a crash bills). */
  checkpoint(items: readonly { requestId: string; entry: LedgerEntry }[]): Promise<void>;
  /** Holds past their TTL (their instance died, or never settled), oldest first, with their last checkpoint. */
  expired(now: number, limit: number): Promise<ExpiredReservation[]>;
  /** Ends an expired hold, giving back `reserved − cost`; false when its turn or another sweeper got there first. */
  settleExpired(requestId: string, payerId: string, costMicros: Micros): Promise<boolean>;
}

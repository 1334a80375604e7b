/**
 * Usage pools and reservations (DESIGN "Pools", "Reservation"). Admission is one atomic step: the rate
 * limits, the concurrent-stream cap and a worst-case reservation against the class's day, week and month
 * windows — one Lua script in Redis (`RedisPoolStore`), one conditional SQL statement in embedded mode
 * (`SqlPoolStore`). Settlement moves a reservation to its actual cost; long streams checkpoint what they
 * have produced; the sweeper settles reservations whose owner died (at their last checkpoint).
 *
 * Pools, reservations and stream slots are keyed by the *payer* (an account, or an organisation's account)
 * and the turn id svc generated — never by anything the client chose.
 */
import type { ModelClass, PoolWindow } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import type { RateDecision, RateRule } from '../rate-limit/gcra.ts';
import type { LedgerEntry } from './ledger.ts';
import type { CurrentWindows } from './windows.ts';

export interface AdmissionRequest {
  /** The turn id. */
  requestId: string;
  payerId: string;
  class: ModelClass;
  windows: CurrentWindows;
  /** Worst-case cost reserved against every window. */
  reserveMicros: Micros;
  limits: Record<PoolWindow, Micros>;
  rateRules: readonly RateRule[];
  /** Concurrent-stream cap for this payer; 0 = not a stream. */
  streamCap: number;
  /** Reservation lifetime before the sweeper may reclaim it. */
  ttlMs: number;
  /**
   * The calling key's own spend caps (issue 51), reserved in the same atomic step as the pools; absent for
   * keys without caps. A request with caps (or a key rpm) never goes under an admission lease: the
   * lease's pre-reserved budget would let a key overshoot across instances.
   */
  keyCap?: KeyCapRequest;
  /** Admit one request at a time in the store's atomic step (no lease): keys with limits. */
  exact?: boolean;
}

/** A key's day and month caps (micros; null = no cap in that window), counted per key and window. */
export interface KeyCapRequest {
  keyId: string;
  day: Micros | null;
  month: Micros | null;
}

/** The windows a key's spend is capped in. */
export const keyCapWindows = ['day', 'month'] as const;
export type KeyCapWindow = (typeof keyCapWindows)[number];

export type Admission =
  | { ok: true; rate: RateDecision }
  | { ok: false; reason: 'rate_limited'; rate: RateDecision }
  | { ok: false; reason: 'stream_cap'; cap: number }
  | { ok: false; reason: 'quota'; window: PoolWindow; usedMicros: Micros; limitMicros: Micros }
  | { ok: false; reason: 'key_budget'; window: KeyCapWindow; usedMicros: Micros; limitMicros: Micros };

export type KeyBudgetRefusal = Extract<Admission, { reason: 'key_budget' }>;

/** What settlement needs to find the reservation again. */
export interface ReservationRef {
  requestId: string;
  payerId: string;
  class: ModelClass;
  windows: CurrentWindows;
  stream: boolean;
  /** The capped key whose day and month counters this reservation also holds (see `AdmissionRequest.keyCap`). */
  capKeyId?: string;
}

/** What a checkpoint is keyed by: the turn, and its payer (the shard its keys live in). */
export type CheckpointRef = Pick<ReservationRef, 'requestId' | 'payerId'>;

export interface PoolUsage {
  class: ModelClass;
  window: PoolWindow;
  usedMicros: Micros;
}

/** Admission lease ids start with this (pool.leasing-store.ts); the sweeper settles them from the ledger instead of writing an abandoned row. */
export const LEASE_PREFIX = 'lse_';

export interface ExpiredReservation {
  requestId: string;
  payerId: string;
  class: ModelClass;
  reservedMicros: Micros;
  /** The instance that made it (null for reservations older than heartbeats). */
  instanceId: string | null;
  /** The last checkpoint of a stream (what it had produced, as a ledger row) or of a finished turn, or null. */
  checkpoint: LedgerEntry | null;
}

export interface PoolStore {
  admit(request: AdmissionRequest): Promise<Admission>;
  /**
   * Admits at once from what this instance already holds (an admission lease), without waiting on
   * anything; null when only `admit` can answer (it also gives every refusal).
   */
  admitNow?(request: AdmissionRequest): Admission | null;
  /**
   * Moves each reservation to its actual cost (0 = full refund) and frees its stream slot. Returns, per
   * item, whether the reservation still existed. When it is gone (settled already, swept, or lost with
   * Redis) nothing moves: whoever removed it accounted for it — the sweeper settles to the ledger's cost,
   * reconciliation raises lost counters to the ledger — so no request is ever charged twice.
   */
  settle(items: readonly { ref: ReservationRef; costMicros: Micros }[]): Promise<boolean[]>;
  /**
   * Records what running streams have produced so far, and finished turns' rows until settlement writes
   * them (`final`), as the ledger row the sweeper would write if their instance died. Overwrites the
   * previous checkpoint; settlement removes it with the reservation.
   */
  checkpoint(items: readonly { ref: CheckpointRef; entry: LedgerEntry }[]): Promise<void>;
  /**
   * The final checkpoints of turns that hold no reservation (paid from credit: their hold is in SQL), read
   * by the sweeper for holds past their TTL; null where there is none. Absent when checkpoints live only on
   * reservations (the SQL store).
   */
  checkpointsOf?(refs: readonly CheckpointRef[]): Promise<(LedgerEntry | null)[]>;
  /** Forgets such turns' checkpoints once their ledger rows are written. */
  dropCheckpoints?(refs: readonly CheckpointRef[]): Promise<void>;
  /** Reservations past their TTL, oldest first, with their last checkpoint. */
  expired(now: number, limit: number): Promise<ExpiredReservation[]>;
  /**
   * Records that this instance is alive (every few seconds). True when the store had no record of this
   * instance: on the first beat, or after Redis lost its data (a restart without persistence, a flush).
   */
  heartbeat(): Promise<boolean>;
  /** Reservations of instances that stopped heartbeating (they died): settled by the sweeper at once, not at their TTL. */
  orphaned(limit: number): Promise<ExpiredReservation[]>;
  /** This instance is shutting down cleanly (after settling everything it held). */
  leave(): Promise<void>;
  /** Settles an expired reservation to `costMicros`; false when another sweeper or the owner got there first. */
  settleExpired(requestId: string, costMicros: Micros, payerId?: string): Promise<boolean>;
  /** Used micros of the current windows (reservations included), for every class. */
  read(payerId: string, windows: CurrentWindows): Promise<PoolUsage[]>;
  /**
   * Raises pool counters, and capped keys' spend counters, that fell below what the ledger billed in the
   * same window (a Redis restart or flush lost them). Never lowers a counter: it may hold reservations of
   * requests still running. Absent when the counters live in the same database as the ledger.
   */
  raiseToLedger?(floors: readonly LedgerFloor[], windows: CurrentWindows, keyFloors?: readonly KeyCapFloor[]): Promise<number>;
  /** Stores that can lose their counters (Redis): how to reconcile when an admission finds them lost. */
  whenUnreconciled?(reconcile: () => Promise<unknown>): void;
  /** The admission lease a turn was admitted under (its ledger row names it); absent without leases. */
  leaseOf?(requestId: string): string | undefined;
  /** The last checkpoints of the streams admitted under a lease (for the sweeper, after a crash). */
  leaseCheckpoints?(leaseId: string): Promise<LedgerEntry[]>;
  /**
   * A turn the pools refused that prepaid credit will pay (admission.ts): reserves its worst case against
   * the key's caps alone (`request.keyCap`), in one atomic step as pool-paid turns are, no pool moving —
   * so a capped key never spends past its cap whichever source pays. Null when held, else the key's refusal.
   */
  holdKeyCap?(request: AdmissionRequest): Promise<KeyBudgetRefusal | null>;
  /**
   * Moves a `holdKeyCap` hold to the turn's cost (0 = all of it back) and ends it; false when there is none
   * (an uncapped key, or its settlement or the sweeper ended it first).
   */
  releaseKeyCap?(requestId: string, payerId: string, costMicros: Micros): Promise<boolean>;
  /** A capped key's used micros in its current day and month (reservations and credit-paid holds included), for quotes. */
  readKeyCap?(keyId: string, payerId: string, windows: CurrentWindows): Promise<Record<KeyCapWindow, Micros>>;
  /** Returns what the store holds for this instance (admission leases); after settlement has flushed. */
  close?(): Promise<void>;
}

/** What the ledger billed one payer for one class in each current window. */
export interface LedgerFloor {
  payerId: string;
  class: ModelClass;
  billed: Record<PoolWindow, Micros>;
}

/** What the ledger billed one capped key in its current day and month (what its spend counters count). */
export interface KeyCapFloor {
  keyId: string;
  /** Whose pools the key spends: its counters live in that payer's shard. */
  payerId: string;
  billed: Record<KeyCapWindow, Micros>;
}

/**
 * Usage pools and reservations (DESIGN "Pools", "Reservation"). Admission is one atomic step: the rate
 * limits, the concurrent-stream cap and a worst-case reservation against the class's day, week and month
 * windows — one Lua script in Redis (`RedisPoolStore`), one conditional SQL statement in embedded mode
 * (`SqlPoolStore`). Settlement moves a reservation to its actual cost; the sweeper settles or releases
 * reservations whose owner died.
 */
import type { ModelClass, PoolWindow } from '../../config/config.ts';
import type { Micros } from '../../config/money.ts';
import type { RateDecision, RateRule } from '../rate-limit/gcra.ts';
import type { CurrentWindows } from './windows.ts';

export interface AdmissionRequest {
  requestId: string;
  accountId: string;
  class: ModelClass;
  windows: CurrentWindows;
  /** Worst-case cost reserved against every window. */
  reserveMicros: Micros;
  limits: Record<PoolWindow, Micros>;
  rateRules: readonly RateRule[];
  /** Concurrent-stream cap for this account; 0 = not a stream. */
  streamCap: number;
  /** Reservation lifetime before the sweeper may reclaim it. */
  ttlMs: number;
}

export type Admission =
  | { ok: true; rate: RateDecision }
  | { ok: false; reason: 'rate_limited'; rate: RateDecision }
  | { ok: false; reason: 'stream_cap'; cap: number }
  | { ok: false; reason: 'quota'; window: PoolWindow; usedMicros: Micros; limitMicros: Micros };

/** What settlement needs to find the reservation again. */
export interface ReservationRef {
  requestId: string;
  accountId: string;
  class: ModelClass;
  windows: CurrentWindows;
  stream: boolean;
}

export interface PoolUsage {
  class: ModelClass;
  window: PoolWindow;
  usedMicros: Micros;
}

export interface ExpiredReservation {
  requestId: string;
  accountId: string;
  class: ModelClass;
  reservedMicros: Micros;
}

export interface PoolStore {
  admit(request: AdmissionRequest): Promise<Admission>;
  /**
   * Moves each reservation to its actual cost (0 = full refund) and frees its stream slot. Returns, per
   * item, whether the reservation still existed. When it is gone (settled already, swept, or lost with
   * Redis) nothing moves: whoever removed it accounted for it — the sweeper settles to the ledger's cost,
   * reconciliation raises lost counters to the ledger — so no request is ever charged twice.
   */
  settle(items: readonly { ref: ReservationRef; costMicros: Micros }[]): Promise<boolean[]>;
  /** Reservations past their TTL, oldest first. */
  expired(now: number, limit: number): Promise<ExpiredReservation[]>;
  /** Settles an expired reservation to `costMicros`; false when another sweeper or the owner got there first. */
  settleExpired(requestId: string, costMicros: Micros): Promise<boolean>;
  /** Used micros of the current windows (reservations included), for every class. */
  read(accountId: string, windows: CurrentWindows): Promise<PoolUsage[]>;
  /**
   * Raises pool counters that fell below what the ledger billed in the same window (a Redis restart or
   * flush lost them). Never lowers a counter: it may hold reservations of requests still running. Absent
   * when the counters live in the same database as the ledger.
   */
  raiseToLedger?(floors: readonly LedgerFloor[], windows: CurrentWindows): Promise<number>;
}

/** What the ledger billed one account for one class in each current window. */
export interface LedgerFloor {
  accountId: string;
  class: ModelClass;
  billed: Record<PoolWindow, Micros>;
}

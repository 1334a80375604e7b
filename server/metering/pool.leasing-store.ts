/**
 * Admission leases (issue 16): admission without a Redis round trip on the common path. An instance takes a
 * lease per payer, class, windows and rate-rule set — `chunkRequests` worst cases of micros from the day,
 * week and month pools at first, twice as many after a lease was used up within its window (up to 32×),
 * half after one retired mostly unused, never more than a quarter of what is left (so leases shrink as a
 * pool fills), and as many requests from every rate rule — in one script; the lease counts
 * as reserved in Redis (a reservation record, index entry and instance-set entry like any other), so the
 * instances together can never admit beyond a pool or a limit. While the lease covers a request's worst
 * case and has a request left, the request is admitted here, in memory.
 *
 * - Near the end of a pool (fewer than eight worst cases left in a window) no lease is granted: requests go
 *   through the exact one-request script, so a small pool admits exactly up to its end.
 * - Only busy payers are leased: a key gets a lease once it has had `hotRequests` admissions within a
 *   second (8 by default). A member chatting by hand, and every payer's first requests, take the exact path.
 * - A lease admits for `admitWindowMs`; then (or when it cannot cover a request) it retires and gives its
 *   unused budget back at once; once the requests it admitted have settled — their ledger rows written with
 *   its id — it is settled to what they cost: the pools move by consumed − still leased (the settlement
 *   script), unused rate-limit requests are given back. On shutdown every lease is returned after
 *   settlement has flushed.
 * - A request under a lease that is refunded (it cost nothing) gives its reservation back to the pools in
 *   Redis, not to the lease — before its error reply is written (`Settlement.commit`): a refund is seen by
 *   the next request on every instance, as on the exact path.
 * - When its instance dies, the sweeper settles the lease to the sum of the ledger rows written under it
 *   (`usage_ledger.lease_id`): exactly what was billed stays, the rest is returned. Requests in flight at
 *   the crash have no row and cost nothing, as an abandoned non-streaming request does today.
 * - Streams are leased too, with the concurrent-stream cap: a stream lease also takes one of the payer's
 *   stream slots in Redis per request it may admit (no more than a quarter of those free, so a small cap is
 *   admitted by the exact script), freed when the lease retires (the unused ones) and when it is returned
 *   (the rest, once its streams have ended). Checkpoints of its long streams are listed under the lease, so
 *   after a crash the sweeper bills them from their last checkpoint as it does an exact stream.
 * - Redis Cluster uses the exact path, and so does every request while the connection to Redis is down:
 *   every lease retires, admission fails closed.
 * - Rate-limit headers count the rule, not the lease: what Redis had left once the lease was taken plus
 *   what the lease still holds (a lower bound: the rule refills meanwhile). The usage page read here takes
 *   this instance's unused leased budget off the pools.
 *
 * The approximations left, bounded: a request may be refused by the exact path while another
 * instance's active lease still holds budget (or stream slots) it has no requests for; a lease that has admitted nothing for
 * `idleMs` (0.2 s) retires and gives it back. Never an overdraft — at worst an early 402 for a busy payer at its pool's end —
 * and another instance's unused leased budget shows as used on this one's usage page meanwhile. A stream
 * lease's used slots are freed together when its last stream ends (≤ its admit window + the longest of its
 * streams); a dead instance's, when the sweeper settles its lease.
 */
import { randomBytes } from 'node:crypto';
import type { Micros } from '../config/money.ts';
import type { RateRule } from '../rate-limit/gcra.ts';
import type { LedgerEntry } from './ledger.ts';
import { LEASE_PREFIX, type Admission, type AdmissionRequest, type CheckpointRef, type PoolStore, type ReservationRef } from './pool.store.ts';
import type { RedisPoolStore } from './pool.redis-store.ts';
import { poolWindows } from '../config/config.ts';

export { LEASE_PREFIX } from './pool.store.ts';

export interface LeaseOptions {
  /** Worst cases of the first request a lease is sized for (micros), and requests per lease. */
  chunkRequests: number;
  /** How long a lease admits before it retires. */
  admitWindowMs: number;
  /** The reservation TTL: a lease stays recorded this long past its admit window (its requests may run that long). */
  reservationTtlMs: number;
  /** After a refused lease, requests of that key take the exact path this long before asking again. */
  refusedForMs: number;
  /** A key is leased once it has had this many admissions within a second (1 = from the first request). */
  hotRequests: number;
  /** A lease that has admitted nothing for this long retires and gives its unused budget back. */
  idleMs: number;
  onError: (error: unknown, what: string) => void;
}

interface Lease {
  id: string;
  key: string;
  ref: ReservationRef;
  rules: readonly RateRule[];
  micros: Micros;
  /** Micros not yet reserved by a request admitted under it. */
  available: Micros;
  /** Of those, given back to the pools when it retired (its last requests may still be running). */
  released: Micros;
  /** What its settled requests cost. */
  consumed: Micros;
  /** Rate-limit requests left, of those it was granted. */
  requests: number;
  granted: number;
  /** Stream slots it holds in Redis (0: not a stream lease): members 1…slots; those past `slots − requests` are unused. */
  slots: number;
  /** Its streams that have checkpointed (their keys go when it is returned). */
  checkpointed: Set<string> | null;
  /** The tightest rule's requests left in Redis once the lease was taken, and that rule (for headers). */
  ruleLeft: number;
  rule: RateRule;
  inflight: number;
  admitUntil: number;
  /** When it last admitted: a lease idle for `idleMs` retires (its payer has gone quiet here). */
  lastAdmit: number;
  retired: boolean;
  returned: boolean;
}

export class LeasingPoolStore implements PoolStore {
  readonly #inner: RedisPoolStore;
  readonly #options: LeaseOptions;
  /** The lease admitting for each key. */
  readonly #active = new Map<string, Lease>();
  /** Every lease not yet returned (active and retired). */
  readonly #open = new Set<Lease>();
  /** Requests admitted under a lease, by turn id. */
  readonly #admitted = new Map<string, { lease: Lease; reserved: Micros }>();
  /** A lease being taken, per key: concurrent requests wait for it instead of taking their own. */
  readonly #taking = new Map<string, Promise<Lease | null>>();
  readonly #refusedUntil = new Map<string, number>();
  /** Keys not (yet) leased: admissions within the current second, to tell a busy payer from a casual one. */
  readonly #recent = new Map<string, { since: number; count: number }>();
  /**
   * Per leased key: how many requests its next lease asks for, and when it last took one (a key leased
   * within the last second is still busy). A lease used up within its admit window doubles the next one
   * (up to 32 × `chunkRequests`), one that retires mostly unused halves it: a payer sending thousands of
   * requests a second takes a lease every few hundred of them instead of every 32, and the requests that
   * wait on a lease are not left to the exact path when it cannot cover them all.
   */
  readonly #demand = new Map<string, { size: number; leasedAt: number }>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(inner: RedisPoolStore, options: LeaseOptions) {
    this.#inner = inner;
    this.#options = options;
    this.#timer = setInterval(() => this.#retireDue(), Math.max(50, Math.min(1000, options.idleMs / 2, options.admitWindowMs / 4))).unref();
  }

  /** Leases not yet returned (for tests and shutdown). */
  get openLeases(): number {
    return this.#open.size;
  }

  /** The lease a turn was admitted under, for its ledger row; undefined when it took the exact path. */
  leaseOf(requestId: string): string | undefined {
    return this.#admitted.get(requestId)?.lease.id;
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    // A key with its own limits is admitted one request at a time by the exact script: a lease's
    // pre-reserved budget and rate tokens would let the key's caps be overshot across instances.
    if (this.#closed || request.exact) return this.#inner.admit(request);
    if (!this.#inner.connected) {
      // Redis went away (maybe with its data): no admission in memory; the exact path fails closed (503).
      for (const lease of [...this.#active.values()]) this.#retire(lease);
      return this.#inner.admit(request);
    }
    const key = leaseKey(request);
    let now = Date.now();
    // A lease used up by the requests that waited for it is followed by another (three at most), not by the exact path.
    for (let taken = 0; ; taken++) {
      const admitted = this.#underLease(key, request, now);
      if (admitted) return admitted;
      if (taken === 3) break;
      const lease = this.#active.get(key);
      if (lease) this.#retire(lease, now);
      if (!this.#hot(key, now) || (this.#refusedUntil.get(key) ?? 0) > now) break;
      if (!(await this.#take(key, request))) break;
      now = Date.now();
    }
    return this.#inner.admit(request);
  }

  /** Admits under this instance's lease when it covers the request (the common case of a busy payer); null otherwise. */
  admitNow(request: AdmissionRequest): Admission | null {
    if (this.#closed || request.exact || !this.#inner.connected) return null;
    return this.#underLease(leaseKey(request), request, Date.now());
  }

  /** Admits under the payer's active lease when it covers the request; null otherwise. */
  #underLease(key: string, request: AdmissionRequest, now: number): Admission | null {
    const lease = this.#active.get(key);
    return lease && this.#usable(lease, request, now) ? this.#admitUnder(lease, request, now) : null;
  }

  #admitUnder(lease: Lease, request: AdmissionRequest, now: number): Admission {
    lease.available -= request.reserveMicros;
    lease.requests -= 1;
    lease.inflight += 1;
    lease.lastAdmit = now;
    this.#admitted.set(request.requestId, { lease, reserved: request.reserveMicros });
    // The rule's own count as this instance sees it: what Redis had left plus what the lease still holds.
    const { rule } = lease;
    const remaining = lease.ruleLeft + lease.requests;
    return { ok: true, rate: { allowed: true, rule, remaining, resetMs: Math.ceil((rule.periodMs / rule.limit) * Math.max(0, (rule.burst ?? rule.limit) - remaining)), retryAfterMs: 0 } };
  }

  /** Counts an admission of a key without a lease; true once the key is busy enough to lease. */
  #hot(key: string, now: number): boolean {
    const hot = this.#options.hotRequests;
    if (hot <= 1) return true;
    const demand = this.#demand.get(key);
    if (demand && now - demand.leasedAt < 1000) return true;
    let recent = this.#recent.get(key);
    if (!recent || now - recent.since >= 1000) {
      if (this.#recent.size >= 10_000) this.#recent.clear();
      recent = { since: now, count: 0 };
      this.#recent.set(key, recent);
    }
    recent.count += 1;
    return recent.count >= hot;
  }

  #usable(lease: Lease, request: AdmissionRequest, now: number): boolean {
    return !lease.retired && now < lease.admitUntil && lease.requests >= 1 && lease.available >= request.reserveMicros;
  }

  async #take(key: string, request: AdmissionRequest): Promise<Lease | null> {
    const pending = this.#taking.get(key);
    if (pending) return pending;
    const taking = (async () => {
      const id = `${LEASE_PREFIX}${randomBytes(12).toString('base64url')}`;
      if (request.reserveMicros <= 0) return null;
      const demand = this.#demand.get(key);
      const granted = await this.#inner.takeLease(id, request, demand?.size ?? this.#options.chunkRequests, request.reserveMicros, this.#options.admitWindowMs + this.#options.reservationTtlMs);
      if (!granted) {
        this.#refusedUntil.set(key, Date.now() + this.#options.refusedForMs);
        if (this.#refusedUntil.size > 10_000) this.#refusedUntil.clear();
        return null;
      }
      const lease: Lease = {
        id,
        key,
        ref: { requestId: id, payerId: request.payerId, class: request.class, windows: request.windows, stream: request.streamCap > 0 },
        rules: request.rateRules,
        micros: granted.micros,
        available: granted.micros,
        released: 0,
        consumed: 0,
        requests: granted.requests,
        granted: granted.requests,
        slots: request.streamCap > 0 ? granted.requests : 0,
        checkpointed: null,
        ruleLeft: granted.ruleLeft,
        rule: request.rateRules[granted.ruleIndex] ?? request.rateRules[0]!,
        inflight: 0,
        admitUntil: Date.now() + this.#options.admitWindowMs,
        lastAdmit: Date.now(),
        retired: false,
        returned: false,
      };
      this.#open.add(lease);
      if (demand) demand.leasedAt = lease.lastAdmit;
      else {
        if (this.#demand.size >= 10_000) this.#demand.clear();
        this.#demand.set(key, { size: this.#options.chunkRequests, leasedAt: lease.lastAdmit });
      }
      const current = this.#active.get(key);
      if (current) this.#retire(current);
      this.#active.set(key, lease);
      if (this.#closed) this.#retire(lease);
      return lease;
    })();
    this.#taking.set(key, taking);
    try {
      return await taking;
    } catch {
      return null; // Redis away: the exact path answers (and fails closed) for this request
    } finally {
      this.#taking.delete(key);
    }
  }

  async settle(items: readonly { ref: ReservationRef; costMicros: Micros }[]): Promise<boolean[]> {
    const out: boolean[] = new Array<boolean>(items.length);
    const exact: { ref: ReservationRef; costMicros: Micros }[] = [];
    const exactIndexes: number[] = [];
    const refunds: Promise<void>[] = [];
    const done: Lease[] = [];
    items.forEach((item, i) => {
      const leased = this.#admitted.get(item.ref.requestId);
      if (!leased) {
        exact.push(item);
        exactIndexes.push(i);
        return;
      }
      // The ledger row (with the lease's id) is written: the lease keeps what it cost, frees the rest.
      this.#admitted.delete(item.ref.requestId);
      const { lease, reserved } = leased;
      const cost = Math.min(item.costMicros, reserved);
      lease.consumed += cost;
      lease.inflight -= 1;
      // A turn that cost nothing (a refund) gives its reservation back to the pools in Redis, where every
      // instance sees it; the rest of a turn's reservation stays in the lease for its next requests.
      if (cost === 0 && reserved > 0) refunds.push(this.#refund(lease, reserved));
      else lease.available += reserved - cost;
      out[i] = true;
      if (lease.retired && lease.inflight === 0) done.push(lease);
    });
    if (exact.length > 0 || refunds.length > 0) {
      const [settled] = await Promise.all([exact.length > 0 ? this.#inner.settle(exact) : [], ...refunds]);
      exactIndexes.forEach((i, j) => (out[i] = settled[j]!));
    }
    for (const lease of done) void this.#return(lease);
    return out;
  }

  /** Gives a refunded turn's reservation back out of its lease; kept by the lease (returned with it) if Redis refuses. */
  async #refund(lease: Lease, micros: Micros): Promise<void> {
    try {
      await this.#inner.releaseLeased(lease.ref, micros);
    } catch (error) {
      lease.available += micros;
      this.#options.onError(error, 'giving back a refunded request\'s reservation failed; its lease keeps it');
    }
  }

  /** `now`: it is retired because it cannot admit the next request, which grows the next lease when its window had time left. */
  #retire(lease: Lease, now?: number): void {
    if (lease.retired) return;
    lease.retired = true;
    const demand = this.#demand.get(lease.key);
    if (demand) {
      const max = this.#options.chunkRequests * 32;
      if (now !== undefined && now < lease.admitUntil) demand.size = Math.min(max, demand.size * 2);
      else if (lease.requests * 2 > lease.granted) demand.size = Math.max(this.#options.chunkRequests, Math.floor(demand.size / 2));
    }
    if (this.#active.get(lease.key) === lease) this.#active.delete(lease.key);
    if (lease.inflight === 0) void this.#return(lease);
    else if (lease.available > 0 || lease.requests > 0) void this.#release(lease);
  }

  /** A retired lease still waiting for its last requests gives its unused budget (and stream slots) back now, not then. */
  async #release(lease: Lease): Promise<void> {
    if (lease.slots > 0 && lease.requests > 0) {
      const used = lease.slots - lease.requests;
      this.#inner.releaseSlots(lease.ref, used + 1, lease.slots).then(
        () => (lease.slots = used),
        (error: unknown) => this.#options.onError(error, 'freeing a retired lease\'s unused stream slots failed'),
      );
    }
    if (lease.available <= 0) return;
    const micros = lease.available;
    lease.released = micros;
    try {
      await this.#inner.releaseLeased(lease.ref, micros);
    } catch (error) {
      lease.released = 0; // the final settlement returns it all the same
      this.#options.onError(error, 'giving back a retired lease\'s unused budget failed');
    }
  }

  #retireDue(): void {
    const now = Date.now();
    for (const lease of this.#active.values()) if (now >= lease.admitUntil || now - lease.lastAdmit >= this.#options.idleMs) this.#retire(lease);
    for (const [key, until] of this.#refusedUntil) if (until <= now) this.#refusedUntil.delete(key);
    for (const [key, recent] of this.#recent) if (now - recent.since >= 1000) this.#recent.delete(key);
    for (const [key, demand] of this.#demand) if (now - demand.leasedAt >= 10_000 && !this.#active.has(key)) this.#demand.delete(key);
  }

  /** Settles the lease to what it consumed (the pools get the rest back) and gives back unused requests. */
  async #return(lease: Lease): Promise<void> {
    if (lease.returned) return;
    lease.returned = true;
    try {
      await this.#inner.settle([{ ref: lease.ref, costMicros: lease.consumed }]);
      await this.#inner.refundRequests(lease.rules, lease.requests);
      if (lease.slots > 0) await this.#inner.releaseSlots(lease.ref, 1, lease.slots);
      if (lease.checkpointed) await this.#inner.dropLeaseCheckpoints(lease.id, [...lease.checkpointed]);
      this.#open.delete(lease);
    } catch (error) {
      // Redis away: try again on the next tick; the sweeper is the backstop (it settles from the ledger).
      lease.returned = false;
      this.#options.onError(error, 'returning an admission lease failed');
      setTimeout(() => void this.#return(lease), 1000).unref();
    }
  }

  /** Stops leasing and returns every lease (call after settlement has flushed: nothing is in flight). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    for (const lease of [...this.#active.values()]) this.#retire(lease);
    const deadline = Date.now() + 5000;
    while (this.#open.size > 0 && Date.now() < deadline) {
      for (const lease of [...this.#open]) if (lease.inflight === 0) await this.#return(lease);
      if (this.#open.size > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Turns admitted under a lease (streams, and finished turns' final checkpoints) checkpoint under it (with
   * its id on the row, as their ledger row has), and are listed under it by their first checkpoint written.
   */
  async checkpoint(items: readonly { ref: CheckpointRef; entry: LedgerEntry }[]): Promise<void> {
    const rows: { ref: CheckpointRef; entry: LedgerEntry }[] = [];
    const listed: { lease: Lease; leaseId: string; requestId: string }[] = [];
    for (const item of items) {
      const lease = this.#admitted.get(item.ref.requestId)?.lease;
      if (!lease) {
        rows.push(item);
        continue;
      }
      rows.push({ ref: item.ref, entry: { ...item.entry, leaseId: lease.id } });
      if (!lease.checkpointed?.has(item.ref.requestId)) listed.push({ lease, leaseId: lease.id, requestId: item.ref.requestId });
    }
    await this.#inner.checkpoint(rows, listed);
    for (const { lease, requestId } of listed) (lease.checkpointed ??= new Set()).add(requestId);
  }
  expired(now: number, limit: number) {
    return this.#inner.expired(now, limit);
  }
  heartbeat() {
    return this.#inner.heartbeat();
  }
  orphaned(limit: number) {
    return this.#inner.orphaned(limit);
  }
  leave() {
    return this.#inner.leave();
  }
  settleExpired(requestId: string, costMicros: Micros, payerId?: string) {
    return this.#inner.settleExpired(requestId, costMicros, payerId);
  }
  /**
   * The pools as members see them: Redis counts a lease whole, so this instance's unused leased budget is
   * taken off (what its requests reserved and cost stays, as on the exact path). Taken before the read is
   * sent: a lease returned after that is still counted whole in what the read sees.
   */
  async read(payerId: string, windows: AdmissionRequest['windows']) {
    const unused = new Map<string, Micros>();
    for (const lease of this.#open) {
      const { ref } = lease;
      if (lease.returned || ref.payerId !== payerId) continue;
      for (const window of poolWindows) {
        if (ref.windows[window].key !== windows[window].key) continue;
        const slot = `${ref.class}|${window}`;
        unused.set(slot, (unused.get(slot) ?? 0) + lease.available - lease.released);
      }
    }
    const pools = await this.#inner.read(payerId, windows);
    if (unused.size === 0) return pools;
    return pools.map((pool) => {
      const held = unused.get(`${pool.class}|${pool.window}`) ?? 0;
      return held > 0 ? { ...pool, usedMicros: Math.max(0, pool.usedMicros - held) } : pool;
    });
  }
  checkpointsOf(refs: readonly CheckpointRef[]) {
    return this.#inner.checkpointsOf(refs);
  }
  dropCheckpoints(refs: readonly CheckpointRef[]) {
    return this.#inner.dropCheckpoints(refs);
  }
  leaseCheckpoints(leaseId: string) {
    return this.#inner.leaseCheckpoints(leaseId);
  }
  holdKeyCap(request: AdmissionRequest) {
    return this.#inner.holdKeyCap(request);
  }
  releaseKeyCap(requestId: string, payerId: string, costMicros: Micros) {
    return this.#inner.releaseKeyCap(requestId, payerId, costMicros);
  }
  readKeyCap(keyId: string, payerId: string, windows: AdmissionRequest['windows']) {
    return this.#inner.readKeyCap(keyId, payerId, windows);
  }
  raiseToLedger(...args: Parameters<NonNullable<RedisPoolStore['raiseToLedger']>>) {
    return this.#inner.raiseToLedger(...args);
  }
  whenUnreconciled(reconcile: () => Promise<unknown>): void {
    this.#inner.whenUnreconciled(reconcile);
  }
}

/**
 * The last lease key made with each rules array, and what else went into it. Admission hands a busy key's
 * requests one rules array (`Admission.rateRules`) and the windows are one object until the day turns, so
 * the key is built once per payer and window rather than per request.
 */
const keysMade = new WeakMap<readonly RateRule[], { key: string; payerId: string; class: string; streamCap: number; windows: AdmissionRequest['windows'] }>();

/** What a lease is for: one payer, class and set of windows, one set of rate rules (and their limits). */
function leaseKey(request: AdmissionRequest): string {
  const { windows, rateRules } = request;
  const made = keysMade.get(rateRules);
  if (made && made.windows === windows && made.payerId === request.payerId && made.class === request.class && made.streamCap === request.streamCap) return made.key;
  const rules = rateRules.map((rule) => `${rule.key}:${rule.limit}:${rule.periodMs}:${rule.burst ?? ''}`).join('|');
  const key = `${request.payerId}|${request.class}|${request.streamCap}|${windows.day.key}|${windows.week.key}|${windows.month.key}|${rules}`;
  keysMade.set(rateRules, { key, payerId: request.payerId, class: request.class, streamCap: request.streamCap, windows });
  return key;
}

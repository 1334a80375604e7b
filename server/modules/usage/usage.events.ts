/**
 * "An account's usage changed" events behind the `usageUpdated` subscription.
 *
 * Admission and settlement call `changed(accountId)`: a Set insert, nothing awaited, so the gateway's
 * critical section never waits on it. Within `COALESCE_MS` every changed account id is gathered and
 * published as one message on one topic through the GraphQL pub/sub (Redis across instances): one Redis
 * PUBLISH per round however many requests were admitted or settled, and no per-account round trip for
 * accounts nobody watches. Each instance receives the ids and wakes only its own watchers of those
 * accounts; the subscription then reads the fresh `Usage` itself, so the message carries ids, not amounts —
 * one read per account and wake-up on the instance, however many of its subscriptions are open.
 */
import type { PubSub } from 'graphql-yoga';
import { FanOut } from '../../infra/fan-out.ts';

/** One round's changed accounts. */
export interface UsageChanged {
  accountIds: string[];
}

type Topics = Record<string, [UsageChanged]>;

/** Long enough to fold a short request's admission and settlement into one message, short enough to look live. */
const COALESCE_MS = 100;
/** Ids per message, so one round after a burst stays a modest payload. */
const MAX_IDS = 1000;

export class UsageEvents {
  readonly #fanOut: FanOut<UsageChanged>;
  readonly #pending = new Set<string>();
  readonly #listeners: ((accountIds: readonly string[]) => void)[] = [];
  #timer: NodeJS.Timeout | null = null;

  /** `keyPrefix` keeps deployments (and test apps) that share a Redis apart, as it does for keys. */
  constructor(pubsub: PubSub<Topics>, keyPrefix: string) {
    this.#fanOut = new FanOut(pubsub, `${keyPrefix}usage-changed`, (message) => message.accountIds ?? []);
  }

  /** Subscribes this instance to the topic (one Redis SUBSCRIBE for the process, however many watchers). */
  start(): void {
    this.#fanOut.start();
  }

  /** Notes that an account's pools moved (a request admitted or settled). Never blocks, never throws. */
  changed(accountId: string): void {
    if (this.#fanOut.closed) return;
    this.#pending.add(accountId);
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.#publish(), COALESCE_MS);
    this.#timer.unref();
  }

  /**
   * Hears each round this instance publishes (the accounts whose pools it moved), after it is sent. Spend
   * alerts listen here rather than in admission or settlement: the round is already coalesced, and the
   * instance that moved a pool is the one that looks at it (no other instance repeats the work).
   */
  onRound(listener: (accountIds: readonly string[]) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Yields once at once (so a subscriber starts from the current state) and then whenever the account's
   * usage changed on any instance. Changes that arrive while the consumer is busy fold into one wake-up. What
   * it yields is the wake-up's generation (`FanOut`): `UsageService.reportFor` shares one read among the
   * account's subscriptions woken with the same one.
   */
  watch(accountId: string): AsyncIterableIterator<number> {
    return this.#fanOut.watch(accountId);
  }

  /** How many watchers of the account this instance has (for tests and metrics): one per shared stream of subscriptions asking the same (graphql/shared-events.ts), one per other subscription. */
  watching(accountId: string): number {
    return this.#fanOut.watching(accountId);
  }

  /** Sends what is pending, then stops (nothing is noted after). */
  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#publish();
    await this.#fanOut.close();
  }

  #publish(): void {
    this.#timer = null;
    if (this.#pending.size === 0) return;
    const ids = [...this.#pending];
    this.#pending.clear();
    for (let i = 0; i < ids.length; i += MAX_IDS) this.#fanOut.publish({ accountIds: ids.slice(i, i + MAX_IDS) });
    for (const listener of this.#listeners) listener(ids);
  }
}

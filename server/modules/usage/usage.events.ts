/**
 * "An account's usage changed" events behind the `usageUpdated` subscription.
 *
 * Admission and settlement call `changed(accountId)`: a Set insert, nothing awaited, so the gateway's
 * critical section never waits on it. Within `COALESCE_MS` every changed account id is gathered and
 * published as one message on one topic through the GraphQL pub/sub (Redis across instances): one Redis
 * PUBLISH per round however many requests were admitted or settled, and no per-account round trip for
 * accounts nobody watches. Each instance receives the ids and wakes only its own watchers of those
 * accounts; the subscription then reads the fresh `Usage` itself, so the message carries ids, not amounts.
 */
import { Repeater, SlidingBuffer, type PubSub } from 'graphql-yoga';

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
  readonly #pubsub: PubSub<Topics>;
  readonly #topic: string;
  readonly #pending = new Set<string>();
  readonly #watchers = new Map<string, Set<() => void>>();
  #timer: NodeJS.Timeout | null = null;
  #inbound: AsyncIterator<UsageChanged> | null = null;
  #closed = false;

  /** `keyPrefix` keeps deployments (and test apps) that share a Redis apart, as it does for keys. */
  constructor(pubsub: PubSub<Topics>, keyPrefix: string) {
    this.#pubsub = pubsub;
    this.#topic = `${keyPrefix}usage-changed`;
  }

  /** Subscribes this instance to the topic (one Redis SUBSCRIBE for the process, however many watchers). */
  start(): void {
    if (this.#inbound || this.#closed) return;
    const inbound = this.#pubsub.subscribe(this.#topic)[Symbol.asyncIterator]();
    this.#inbound = inbound;
    const next = (): void => {
      inbound.next().then(
        (result) => {
          if (result.done) return;
          for (const accountId of result.value.accountIds ?? []) for (const wake of this.#watchers.get(accountId) ?? []) wake();
          next();
        },
        () => undefined, // the iterator only throws when it is closed
      );
    };
    next();
  }

  /** Notes that an account's pools moved (a request admitted or settled). Never blocks, never throws. */
  changed(accountId: string): void {
    if (this.#closed) return;
    this.#pending.add(accountId);
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.#publish(), COALESCE_MS);
    this.#timer.unref();
  }

  /**
   * Yields once at once (so a subscriber starts from the current state) and then whenever the account's
   * usage changed on any instance. Changes that arrive while the consumer is busy fold into one wake-up.
   */
  watch(accountId: string): AsyncIterableIterator<true> {
    return new Repeater<true>(async (push, stop) => {
      const wake = () => void push(true);
      let set = this.#watchers.get(accountId);
      if (!set) {
        set = new Set();
        this.#watchers.set(accountId, set);
      }
      set.add(wake);
      wake();
      await stop;
      set.delete(wake);
      if (set.size === 0) this.#watchers.delete(accountId);
    }, new SlidingBuffer(1));
  }

  /** How many subscriptions on this instance watch the account (for tests and metrics). */
  watching(accountId: string): number {
    return this.#watchers.get(accountId)?.size ?? 0;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#publish();
    await this.#inbound?.return?.();
  }

  #publish(): void {
    this.#timer = null;
    if (this.#pending.size === 0) return;
    const ids = [...this.#pending];
    this.#pending.clear();
    for (let i = 0; i < ids.length; i += MAX_IDS) this.#pubsub.publish(this.#topic, { accountIds: ids.slice(i, i + MAX_IDS) });
  }
}

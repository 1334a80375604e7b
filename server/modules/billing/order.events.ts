/**
 * "An order changed" events behind the `orderUpdated` subscription: published after the change committed
 * (on whichever instance received the notification) through the GraphQL pub/sub — Redis across instances
 * — and delivered to the watchers of that order on every instance. The message carries the id only; the
 * subscription reads the order itself.
 */
import { Repeater, SlidingBuffer, type PubSub } from 'graphql-yoga';

export interface OrderChanged {
  orderId: string;
}

type Topics = Record<string, [OrderChanged]>;

export class OrderEvents {
  readonly #pubsub: PubSub<Topics>;
  readonly #topic: string;
  readonly #watchers = new Map<string, Set<() => void>>();
  #inbound: AsyncIterator<OrderChanged> | null = null;
  #closed = false;

  constructor(pubsub: PubSub<Topics>, keyPrefix: string) {
    this.#pubsub = pubsub;
    this.#topic = `${keyPrefix}order-changed`;
  }

  /** One subscription to the topic for the process. */
  start(): void {
    if (this.#inbound || this.#closed) return;
    const inbound = this.#pubsub.subscribe(this.#topic)[Symbol.asyncIterator]();
    this.#inbound = inbound;
    const next = (): void => {
      inbound.next().then(
        (result) => {
          if (result.done) return;
          for (const wake of this.#watchers.get(result.value.orderId) ?? []) wake();
          next();
        },
        () => undefined,
      );
    };
    next();
  }

  changed(orderId: string): void {
    if (!this.#closed) this.#pubsub.publish(this.#topic, { orderId });
  }

  /** Yields at once, then whenever the order changes on any instance. */
  watch(orderId: string): AsyncIterableIterator<true> {
    return new Repeater<true>(async (push, stop) => {
      const wake = () => void push(true);
      let set = this.#watchers.get(orderId);
      if (!set) {
        set = new Set();
        this.#watchers.set(orderId, set);
      }
      set.add(wake);
      wake();
      await stop;
      set.delete(wake);
      if (set.size === 0) this.#watchers.delete(orderId);
    }, new SlidingBuffer(1));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#inbound?.return?.();
  }
}

/**
 * "An order changed" events behind the `orderUpdated` subscription: published after the change committed
 * (on whichever instance received the notification) through the GraphQL pub/sub — Redis across instances
 * — and delivered to the watchers of that order on every instance. The message carries the id only; the
 * subscription reads the order itself.
 */
import type { PubSub } from 'graphql-yoga';
import { FanOut } from '../../infra/fan-out.ts';

export interface OrderChanged {
  orderId: string;
}

type Topics = Record<string, [OrderChanged]>;

export class OrderEvents {
  readonly #fanOut: FanOut<OrderChanged>;

  constructor(pubsub: PubSub<Topics>, keyPrefix: string) {
    this.#fanOut = new FanOut(pubsub, `${keyPrefix}order-changed`, (message) => [message.orderId]);
  }

  /** One subscription to the topic for the process. */
  start(): void {
    this.#fanOut.start();
  }

  changed(orderId: string): void {
    if (!this.#fanOut.closed) this.#fanOut.publish({ orderId });
  }

  /** Yields its generation (`FanOut`) at once, then whenever the order changes on any instance. */
  watch(orderId: string): AsyncIterableIterator<number> {
    return this.#fanOut.watch(orderId);
  }

  close(): Promise<void> {
    return this.#fanOut.close();
  }
}

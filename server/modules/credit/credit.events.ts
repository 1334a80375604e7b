/**
 * "An account's credit changed" events behind the `creditUpdated` subscription: published after the change
 * committed (a purchase, a redemption, a spend or its refund) through the GraphQL pub/sub — Redis across
 * instances. The message carries the account id only; the subscription reads the balance itself.
 */
import type { PubSub } from 'graphql-yoga';
import { FanOut } from '../../infra/fan-out.ts';

export interface CreditChanged {
  accountId: string;
}

type Topics = Record<string, [CreditChanged]>;

export class CreditEvents {
  readonly #fanOut: FanOut<CreditChanged>;

  constructor(pubsub: PubSub<Topics>, keyPrefix: string) {
    this.#fanOut = new FanOut(pubsub, `${keyPrefix}credit-changed`, (message) => [message.accountId]);
  }

  start(): void {
    this.#fanOut.start();
  }

  changed(accountId: string): void {
    if (!this.#fanOut.closed) this.#fanOut.publish({ accountId });
  }

  /** Yields its generation (`FanOut`) at once, then whenever the account's credit changes on any instance. */
  watch(accountId: string): AsyncIterableIterator<number> {
    return this.#fanOut.watch(accountId);
  }

  close(): Promise<void> {
    return this.#fanOut.close();
  }
}

/**
 * "An account has a new alert notice (or read them)" behind the `alertNoticesUpdated` subscription: the
 * recipients' ids go through the GraphQL pub/sub (Redis across instances) after the notice committed, and
 * wake only their watchers; the subscription reads the notices itself.
 */
import type { PubSub } from 'graphql-yoga';
import { FanOut } from '../../infra/fan-out.ts';

export interface NoticesChanged {
  accountIds: string[];
}

type Topics = Record<string, [NoticesChanged]>;

export class AlertEvents {
  readonly #fanOut: FanOut<NoticesChanged>;

  constructor(pubsub: PubSub<Topics>, keyPrefix: string) {
    this.#fanOut = new FanOut(pubsub, `${keyPrefix}alert-notices`, (message) => message.accountIds ?? []);
  }

  start(): void {
    this.#fanOut.start();
  }

  changed(accountIds: readonly string[]): void {
    if (accountIds.length > 0 && !this.#fanOut.closed) this.#fanOut.publish({ accountIds: [...accountIds] });
  }

  /** Yields its generation (`FanOut`) at once, then whenever the account's notices change on any instance. */
  watch(accountId: string): AsyncIterableIterator<number> {
    return this.#fanOut.watch(accountId);
  }

  close(): Promise<void> {
    return this.#fanOut.close();
  }
}

/**
 * One pub/sub topic fanned out to this instance's watchers by id — what `orderUpdated` and `usageUpdated`
 * share. The process subscribes to the topic once (one Redis SUBSCRIBE however many watchers); each message
 * names the ids that changed and wakes only the local watchers of those ids. Messages carry ids, never
 * state: a woken subscription reads the fresh state itself.
 */
import { Repeater, SlidingBuffer, type PubSub } from 'graphql-yoga';

export class FanOut<Message> {
  readonly #pubsub: PubSub<Record<string, [Message]>>;
  readonly #topic: string;
  readonly #idsOf: (message: Message) => readonly string[];
  readonly #watchers = new Map<string, Set<() => void>>();
  #inbound: AsyncIterator<Message> | null = null;
  #closed = false;

  /** `idsOf` names the ids a message is about (watchers of other ids are not woken). */
  constructor(pubsub: PubSub<Record<string, [Message]>>, topic: string, idsOf: (message: Message) => readonly string[]) {
    this.#pubsub = pubsub;
    this.#topic = topic;
    this.#idsOf = idsOf;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Subscribes this instance to the topic, once. */
  start(): void {
    if (this.#inbound || this.#closed) return;
    const inbound = (this.#pubsub.subscribe(this.#topic) as AsyncIterable<Message>)[Symbol.asyncIterator]();
    this.#inbound = inbound;
    const next = (): void => {
      inbound.next().then(
        (result) => {
          if (result.done) return;
          for (const id of this.#idsOf(result.value)) for (const wake of this.#watchers.get(id) ?? []) wake();
          next();
        },
        () => undefined, // the iterator only throws when it is closed
      );
    };
    next();
  }

  /** Sends a message to every instance (the caller decides whether it may still, see `closed`). */
  publish(message: Message): void {
    this.#pubsub.publish(this.#topic, message);
  }

  /**
   * Yields once at once (so a subscriber starts from the current state) and then whenever a message names
   * the id on any instance. Messages that arrive while the consumer is busy fold into one wake-up.
   */
  watch(id: string): AsyncIterableIterator<true> {
    return new Repeater<true>(async (push, stop) => {
      const wake = () => void push(true);
      let set = this.#watchers.get(id);
      if (!set) {
        set = new Set();
        this.#watchers.set(id, set);
      }
      set.add(wake);
      wake();
      await stop;
      set.delete(wake);
      if (set.size === 0) this.#watchers.delete(id);
    }, new SlidingBuffer(1));
  }

  /** How many subscriptions on this instance watch the id. */
  watching(id: string): number {
    return this.#watchers.get(id)?.size ?? 0;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#inbound?.return?.();
  }
}

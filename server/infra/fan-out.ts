/**
 * One pub/sub topic fanned out to this instance's watchers by id — what `orderUpdated` and `usageUpdated`
 * share. The process subscribes to the topic once (one Redis SUBSCRIBE however many watchers); each message
 * names the ids that changed and wakes only the local watchers of those ids. Messages carry ids, never
 * state: a woken subscription reads the fresh state itself.
 *
 * Each wake-up carries the id's generation: the number of the message that last named it (counted by this
 * instance), or the count at the time its first watcher arrived. Every watcher an id's message wakes gets the
 * same generation, so they can share one read of that state (`SingleFlight`, keyed by id and generation); a
 * later message has a higher number, so no read begun before it is shared with the wake-up it causes.
 */
import { Repeater, SlidingBuffer, type PubSub } from 'graphql-yoga';

/** Wake-ups given in one turn of the event loop (`#drain`). */
const SLICE = 256;

export class FanOut<Message> {
  readonly #pubsub: PubSub<Record<string, [Message]>>;
  readonly #topic: string;
  readonly #idsOf: (message: Message) => readonly string[];
  readonly #watchers = new Map<string, { wakes: Set<() => void>; generation: number }>();
  /** Messages received so far: the generations. It never goes back, so a key once used is never reused for newer state. */
  #received = 0;
  #inbound: AsyncIterator<Message> | null = null;
  /** Wake-ups not yet given, in arrival order; a watcher woken again before its turn is woken once. */
  readonly #pending = new Set<() => void>();
  #draining = false;
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
          const generation = ++this.#received;
          for (const id of this.#idsOf(result.value)) {
            const watched = this.#watchers.get(id);
            if (!watched) continue;
            watched.generation = generation;
            for (const wake of watched.wakes) this.#pending.add(wake);
          }
          this.#drain();
          next();
        },
        () => undefined, // the iterator only throws when it is closed
      );
    };
    next();
  }

  /**
   * Gives the pending wake-ups `SLICE` at a time, the next slice after the event loop's poll phase
   * (`setImmediate`): answering 5,000 subscriptions of one account in one go held the loop for over a
   * second, long enough for admission's database probe and Redis commands to time out. A wake-up pushes the
   * watcher's generation at the time it is given, so one given late still carries the newest.
   */
  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    const slice = () => {
      let given = 0;
      for (const wake of this.#pending) {
        if (given++ === SLICE) break;
        this.#pending.delete(wake);
        wake();
      }
      if (this.#pending.size > 0) setImmediate(slice);
      else this.#draining = false;
    };
    slice();
  }

  /** Sends a message to every instance (the caller decides whether it may still, see `closed`). */
  publish(message: Message): void {
    this.#pubsub.publish(this.#topic, message);
  }

  /**
   * Yields the id's generation once at once (so a subscriber starts from the current state) and then whenever
   * a message names the id on any instance. Messages that arrive while the consumer is busy fold into one
   * wake-up, the latest generation.
   */
  watch(id: string): AsyncIterableIterator<number> {
    return new Repeater<number>(async (push, stop) => {
      let watched = this.#watchers.get(id);
      if (!watched) {
        watched = { wakes: new Set(), generation: this.#received };
        this.#watchers.set(id, watched);
      }
      const current = watched;
      const wake = () => void push(current.generation);
      current.wakes.add(wake);
      wake();
      await stop;
      current.wakes.delete(wake);
      this.#pending.delete(wake);
      if (current.wakes.size === 0) this.#watchers.delete(id);
    }, new SlidingBuffer(1));
  }

  /** How many subscriptions on this instance watch the id. */
  watching(id: string): number {
    return this.#watchers.get(id)?.wakes.size ?? 0;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#inbound?.return?.();
  }
}

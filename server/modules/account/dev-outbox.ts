/**
 * The development outbox: without a mail server and outside production, the last mails svc "sent" (sign-up
 * and sign-in codes, enterprise and billing notices) are kept here for staff to read in the admin app
 * (`/admin/outbox`), live. With Redis the list is shared by every instance (one capped list, expiring a day
 * after the last mail) and new mails reach every instance's subscribers through the GraphQL pub/sub; without
 * it they live in this process.
 */
import { randomUUID } from 'node:crypto';
import { Repeater, type PubSub } from 'graphql-yoga';
import type { RedisClient } from '../../infra/redis.ts';

export interface OutboxMail {
  id: string;
  to: string;
  subject: string;
  text: string;
  sentAt: Date;
}

/** A mail as it crosses Redis (dates as ISO strings). */
interface OutboxWire {
  id: string;
  to: string;
  subject: string;
  text: string;
  sentAt: string;
}

export type OutboxTopics = Record<string, [OutboxWire]>;

/** How many mails are kept: enough for a morning of trying things out, few enough to read. */
export const devOutboxSize = 100;
const retentionSeconds = 86_400;

export class DevOutbox {
  readonly #redis: RedisClient | null;
  readonly #pubsub: PubSub<OutboxTopics>;
  readonly #key = 'mail:dev-outbox';
  readonly #topic: string;
  /** Single-instance mode: the list itself, newest first. */
  readonly #memory: OutboxMail[] = [];

  constructor(redis: RedisClient | null, pubsub: PubSub<OutboxTopics>, keyPrefix: string) {
    this.#redis = redis;
    this.#pubsub = pubsub;
    this.#topic = `${keyPrefix}dev-outbox-mail`;
  }

  async add(mail: { to: string; subject: string; text: string }): Promise<OutboxMail> {
    const kept: OutboxMail = { id: randomUUID(), ...mail, sentAt: new Date() };
    const wire = toWire(kept);
    if (this.#redis) {
      await this.#redis
        .multi()
        .lpush(this.#key, JSON.stringify(wire))
        .ltrim(this.#key, 0, devOutboxSize - 1)
        .expire(this.#key, retentionSeconds)
        .exec();
    } else {
      this.#memory.unshift(kept);
      this.#memory.length = Math.min(this.#memory.length, devOutboxSize);
    }
    this.#pubsub.publish(this.#topic, wire);
    return kept;
  }

  /** The kept mails, newest first. */
  async list(): Promise<OutboxMail[]> {
    if (!this.#redis) return [...this.#memory];
    const rows = await this.#redis.lrange(this.#key, 0, devOutboxSize - 1);
    return rows.flatMap((row) => {
      try {
        return [fromWire(JSON.parse(row) as OutboxWire)];
      } catch {
        return [];
      }
    });
  }

  /** Every mail added from now on, on any instance. */
  watch(): AsyncIterableIterator<OutboxMail> {
    const source = this.#pubsub.subscribe(this.#topic) as AsyncIterable<OutboxWire>;
    return new Repeater<OutboxMail>(async (push, stop) => {
      const iterator = source[Symbol.asyncIterator]();
      void stop.then(() => iterator.return?.());
      for (;;) {
        const next = await Promise.race([iterator.next(), stop.then(() => ({ done: true as const, value: undefined }))]);
        if (next.done) break;
        await push(fromWire(next.value));
      }
      stop();
    });
  }
}

function toWire(mail: OutboxMail): OutboxWire {
  return { ...mail, sentAt: mail.sentAt.toISOString() };
}

function fromWire(wire: OutboxWire): OutboxMail {
  return { id: wire.id, to: wire.to, subject: wire.subject, text: wire.text, sentAt: new Date(wire.sentAt) };
}

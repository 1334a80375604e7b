/**
 * What `/v1/responses` keeps so a later request can build on it (`gateway.responsesRetentionSeconds`):
 * per response, the conversation it ended with (for `previous_response_id`), and per assistant message
 * item, its text (for `item_reference`, which the Vercel AI SDK sends instead of earlier replies while
 * `store` is true). Kept in Redis (shared by every instance) or, in single-instance mode, in memory
 * (bounded). Every key carries the payer's id: one payer can never read another's conversation, whatever
 * id it sends.
 */
import type { RedisClient } from '../../infra/redis.ts';
import type { ChatMessage } from './chat.validate.ts';

/** In-memory entries kept at most (single-instance mode); the oldest go first. */
const MEMORY_ENTRIES = 10_000;

export interface LoadedConversation {
  /** The conversation of `previous_response_id`; null when none was asked for. Undefined: asked for, not found. */
  previous: ChatMessage[] | null | undefined;
  /** Referenced items that were found, by id. */
  items: Map<string, ChatMessage>;
}

export class ResponseStore {
  readonly #redis: RedisClient | null;
  readonly #ttlSeconds: number;
  readonly #memory = new Map<string, { json: string; expiresAt: number }>();

  constructor(redis: RedisClient | null, retentionSeconds: number) {
    this.#redis = redis;
    this.#ttlSeconds = retentionSeconds;
  }

  /** False when `gateway.responsesRetentionSeconds` is 0: nothing is kept, `previous_response_id` always misses. */
  get enabled(): boolean {
    return this.#ttlSeconds > 0;
  }

  get retentionSeconds(): number {
    return this.#ttlSeconds;
  }

  /** One round trip for the previous response and every referenced item. */
  async load(payerId: string, previousId: string | null, itemIds: readonly string[]): Promise<LoadedConversation> {
    const keys = [...(previousId === null ? [] : [responseKey(payerId, previousId)]), ...itemIds.map((id) => itemKey(payerId, id))];
    const values = keys.length === 0 || !this.enabled ? keys.map(() => null) : await this.#get(keys);
    const items = new Map<string, ChatMessage>();
    let offset = 0;
    let previous: ChatMessage[] | null | undefined = null;
    if (previousId !== null) {
      previous = values[0] ? (JSON.parse(values[0]) as ChatMessage[]) : undefined;
      offset = 1;
    }
    itemIds.forEach((id, i) => {
      const value = values[i + offset];
      if (value) items.set(id, JSON.parse(value) as ChatMessage);
    });
    return { previous, items };
  }

  /** Keeps a response's conversation and its assistant message items for the retention time. */
  async save(payerId: string, responseId: string, conversation: readonly ChatMessage[], items: readonly [string, ChatMessage][]): Promise<void> {
    if (!this.enabled) return;
    const entries: [string, string][] = [[responseKey(payerId, responseId), JSON.stringify(conversation)], ...items.map(([id, message]): [string, string] => [itemKey(payerId, id), JSON.stringify(message)])];
    if (this.#redis) {
      await Promise.all(entries.map(([key, json]) => this.#redis!.set(key, json, 'EX', this.#ttlSeconds)));
      return;
    }
    const expiresAt = Date.now() + this.#ttlSeconds * 1000;
    for (const [key, json] of entries) {
      this.#memory.delete(key);
      this.#memory.set(key, { json, expiresAt });
    }
    for (const key of this.#memory.keys()) {
      if (this.#memory.size <= MEMORY_ENTRIES) break;
      this.#memory.delete(key);
    }
  }

  async #get(keys: string[]): Promise<(string | null)[]> {
    if (this.#redis?.isCluster) {
      // Keys of different ids hash to different slots: one GET each (auto-pipelined into one write per node).
      const redis = this.#redis;
      return Promise.all(keys.map((key) => redis.get(key)));
    }
    if (this.#redis) return this.#redis.mget(keys);
    const now = Date.now();
    return keys.map((key) => {
      const entry = this.#memory.get(key);
      if (!entry) return null;
      if (entry.expiresAt <= now) {
        this.#memory.delete(key);
        return null;
      }
      return entry.json;
    });
  }
}

function responseKey(payerId: string, id: string): string {
  return `responses:${payerId}:${id}`;
}

function itemKey(payerId: string, id: string): string {
  return `responses:${payerId}:item:${id}`;
}

/**
 * What `/v1/responses` keeps (`gateway.responsesRetentionSeconds`): per response, the response object as it
 * was sent (`GET /v1/responses/{id}`), its input items (`GET /v1/responses/{id}/input_items`), the
 * conversation it ended with (for `previous_response_id`), and per assistant message item its text (for
 * `item_reference`, which the Vercel AI SDK sends instead of earlier replies while `store` is true). Kept in
 * Redis (shared by every instance) or, in single-instance mode, in memory (bounded). Every key carries the
 * payer's id: one payer can never read or delete another's response, whatever id it sends.
 */
import type { RedisClient } from '../../infra/redis.ts';
import type { ChatMessage } from './chat.validate.ts';

/** In-memory entries kept at most (single-instance mode); the oldest go first. */
const MEMORY_ENTRIES = 10_000;

/**
 * A response's keys written in one command (`svcResponseSave`): KEYS and ARGV pair up, the last ARGV is the
 * TTL. One command rather than a SET a key saves svc ~4 ioredis commands' work per response (their
 * argument arrays, promises and replies; issue 48).
 */
const saveScript = `
local ttl = ARGV[#ARGV]
for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[i], 'EX', ttl) end
return #KEYS`;

/** The script's command, as `defineCommand` adds it to the client. */
type SavingRedis = RedisClient & { svcResponseSave(count: number, ...keysThenValues: (string | number)[]): Promise<number> };

export interface LoadedConversation {
  /** The conversation of `previous_response_id`; null when none was asked for. Undefined: asked for, not found. */
  previous: ChatMessage[] | null | undefined;
  /** Referenced items that were found, by id. */
  items: Map<string, ChatMessage>;
}

/** One finished response, as kept. */
export interface ResponseRecord {
  conversation: readonly ChatMessage[];
  /** Its assistant message items, by id. */
  items: readonly [string, ChatMessage][];
  /** The response object's JSON, as sent. */
  response: string;
  /** Its input items' JSON (an array). */
  input: string;
}

export class ResponseStore {
  readonly #redis: RedisClient | null;
  readonly #ttlSeconds: number;
  readonly #memory = new Map<string, { json: string; expiresAt: number }>();

  constructor(redis: RedisClient | null, retentionSeconds: number) {
    this.#redis = redis;
    this.#ttlSeconds = retentionSeconds;
    // A cluster puts a response's keys in different slots, which no one script may touch: there, a SET each.
    if (redis && !redis.isCluster) redis.defineCommand('svcResponseSave', { lua: saveScript });
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
    const keys = [...(previousId === null ? [] : [conversationKey(payerId, previousId)]), ...itemIds.map((id) => itemKey(payerId, id))];
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

  /** The response object's JSON as it was sent, or null (unknown, another payer's, expired or deleted). */
  async response(payerId: string, id: string): Promise<string | null> {
    if (!this.enabled) return null;
    const [json] = await this.#get([responseKey(payerId, id)]);
    return json ?? null;
  }

  /** The response's input items, or null when the response is not kept for this payer. */
  async inputItems(payerId: string, id: string): Promise<Record<string, unknown>[] | null> {
    if (!this.enabled) return null;
    const [json] = await this.#get([inputKey(payerId, id)]);
    return json ? (JSON.parse(json) as Record<string, unknown>[]) : null;
  }

  /**
   * Keeps a finished response for the retention time. Its writes are handed to the Redis client when this is
   * called, before the caller answers, and the caller need not wait for them: one connection carries a
   * client's commands to Redis in order, so any later read of this instance (`load`, `response`,
   * `inputItems`) is answered after them. The one command is written to the socket when issued, never
   * auto-pipelined (`writtenAtOnce`, `redis.ts`): it is in the kernel before the reply, so a read through
   * another instance, which starts only once the client has the reply, reaches Redis after it. On a cluster
   * the SETs are auto-pipelined, sent from a `setImmediate`: there only this instance's reads are ordered.
   */
  async save(payerId: string, responseId: string, record: ResponseRecord): Promise<void> {
    if (!this.enabled) return;
    const entries: [string, string][] = [
      [conversationKey(payerId, responseId), JSON.stringify(record.conversation)],
      [responseKey(payerId, responseId), record.response],
      [inputKey(payerId, responseId), record.input],
      ...record.items.map(([id, message]): [string, string] => [itemKey(payerId, id), JSON.stringify(message)]),
    ];
    const redis = this.#redis;
    if (redis?.isCluster) {
      await Promise.all(entries.map(([key, json]) => redis.set(key, json, 'EX', this.#ttlSeconds)));
      return;
    }
    if (redis) {
      const args: (string | number)[] = entries.map(([key]) => key);
      for (const [, json] of entries) args.push(json);
      args.push(this.#ttlSeconds);
      await (redis as SavingRedis).svcResponseSave(entries.length, ...args);
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

  /**
   * Forgets a response: its object, input items, conversation and message items. False when there was none
   * for this payer.
   */
  async delete(payerId: string, id: string): Promise<boolean> {
    const json = await this.response(payerId, id);
    if (json === null) return false;
    const output = (JSON.parse(json) as { output?: { type?: string; id?: string }[] }).output ?? [];
    const keys = [responseKey(payerId, id), inputKey(payerId, id), conversationKey(payerId, id), ...output.filter((item) => item.type === 'message' && item.id).map((item) => itemKey(payerId, item.id!))];
    if (this.#redis) {
      // One DEL a key: the keys of different ids hash to different cluster slots.
      const deleted = await Promise.all(keys.map((key) => this.#redis!.del(key)));
      return deleted[0]! > 0;
    }
    for (const key of keys) this.#memory.delete(key);
    return true;
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

function conversationKey(payerId: string, id: string): string {
  return `responses:${payerId}:${id}`;
}

function responseKey(payerId: string, id: string): string {
  return `responses:${payerId}:${id}:object`;
}

function inputKey(payerId: string, id: string): string {
  return `responses:${payerId}:${id}:input`;
}

function itemKey(payerId: string, id: string): string {
  return `responses:${payerId}:item:${id}`;
}

/**
 * What `/v1/responses` keeps (`gateway.responsesRetentionSeconds`): per response, the response object as it
 * was sent (`GET /v1/responses/{id}`), its input items (`GET /v1/responses/{id}/input_items`) and the
 * conversation it ended with (for `previous_response_id`). Its message items are found through it: their ids
 * are the response's own (`msg_<hex>` of `resp_<hex>`, `messageItemId`), so an `item_reference` — which the
 * Vercel AI SDK sends instead of earlier replies while `store` is true — reads the response object and takes
 * the item from its output. Kept in Redis (shared by every instance) or, in single-instance mode, in memory
 * (bounded). Every key carries the payer's id: one payer can never read or delete another's response,
 * whatever id it sends.
 *
 * A response is one key (`responses:<payer>:<id>:kept`) holding its three parts' JSON joined by newlines —
 * JSON as `JSON.stringify` writes it never holds a raw newline — written with one plain `SET … EX`. A Lua
 * script setting three keys a response cost Redis ~90 µs a turn more than chat's path, twice the data's own
 * cost, and a second SET a message item most of the rest (issue 48). An item is read with a script that
 * returns the value's first part, the response object: a reply's size, not its whole conversation's (a
 * conversation of n turns references n replies). What an older svc kept — a key for each part, a key per
 * message item — is read too, until its retention ends.
 */
import type { Redis } from 'ioredis';
import type { RedisClient } from '../../infra/redis.ts';
import { setNow } from '../../infra/redis-written.ts';
import type { ChatMessage } from './chat.validate.ts';
import { asChatMessage, type OutputItem } from './responses.items.ts';

/** In-memory entries kept at most (single-instance mode); the oldest go first. */
const MEMORY_ENTRIES = 10_000;

export interface LoadedConversation {
  /** The conversation of `previous_response_id`; null when none was asked for. Undefined: asked for, not found. */
  previous: ChatMessage[] | null | undefined;
  /** Referenced items that were found, by id. */
  items: Map<string, ChatMessage>;
}

/** One finished response, as kept: each part JSON. */
export interface ResponseRecord {
  /** The conversation it ended with (an array of chat messages). */
  conversation: string;
  /** The response object, as sent. */
  response: string;
  /** Its input items (an array). */
  input: string;
}

/** The first part of a kept response (the response object), or nil: what an `item_reference` reads. */
const responsePartScript = `
local kept = redis.call('GET', KEYS[1])
if not kept then return false end
local line = string.find(kept, '\\n', 1, true)
if line then return string.sub(kept, 1, line - 1) end
return kept
`;

/** The id of a response's `n`th message item (from 0): the response's own id, so the item is found through it. */
export function messageItemId(responseId: string, n: number): string | null {
  const hex = SVC_RESPONSE_ID.exec(responseId)?.[1];
  if (hex === undefined) return null;
  return n === 0 ? `msg_${hex}` : `msg_${hex}_${n}`;
}

/** Ids svc gives responses, and the message item ids made from them. */
const SVC_RESPONSE_ID = /^resp_([0-9a-f]{48})$/;
const SVC_MESSAGE_ID = /^msg_([0-9a-f]{48})(?:_[1-9]\d{0,3})?$/;

interface ResponsePartCommand {
  svcResponsePart(key: string): Promise<string | null>;
}

export class ResponseStore {
  readonly #redis: RedisClient | null;
  readonly #ttlSeconds: number;
  readonly #memory = new Map<string, { json: string; expiresAt: number }>();

  constructor(redis: RedisClient | null, retentionSeconds: number) {
    this.#redis = redis;
    this.#ttlSeconds = retentionSeconds;
    redis?.defineCommand('svcResponsePart', { numberOfKeys: 1, lua: responsePartScript });
  }

  /** False when `gateway.responsesRetentionSeconds` is 0: nothing is kept, `previous_response_id` always misses. */
  get enabled(): boolean {
    return this.#ttlSeconds > 0;
  }

  get retentionSeconds(): number {
    return this.#ttlSeconds;
  }

  /**
   * One round trip for the previous response and every referenced item: a message item from its response's
   * object, or from the key an older svc kept it under.
   */
  async load(payerId: string, previousId: string | null, itemIds: readonly string[]): Promise<LoadedConversation> {
    const keys = [...(previousId === null ? [] : [keptKey(payerId, previousId), conversationKey(payerId, previousId)]), ...itemIds.map((id) => itemKey(payerId, id))];
    if (keys.length === 0 || !this.enabled) return { previous: previousId === null ? null : undefined, items: new Map() };
    const owners = [...new Set(itemIds.map((id) => SVC_MESSAGE_ID.exec(id)?.[1]).filter((owner) => owner !== undefined))];
    // Issued in one tick: auto-pipelined into one write with the GETs.
    const [values, parts] = await Promise.all([this.#get(keys), Promise.all(owners.map((owner) => this.#responsePart(keptKey(payerId, `resp_${owner}`))))]);
    const outputs = new Map<string, OutputItem[]>();
    owners.forEach((owner, i) => {
      const json = parts[i];
      if (json) outputs.set(owner, (JSON.parse(json) as { output?: OutputItem[] }).output ?? []);
    });
    const items = new Map<string, ChatMessage>();
    let offset = 0;
    let previous: ChatMessage[] | null | undefined = null;
    if (previousId !== null) {
      const json = values[0] ? part(values[0], CONVERSATION) : values[1];
      previous = json ? (JSON.parse(json) as ChatMessage[]) : undefined;
      offset = 2;
    }
    itemIds.forEach((id, i) => {
      const value = values[i + offset];
      if (value) return items.set(id, JSON.parse(value) as ChatMessage);
      const item = outputs.get(SVC_MESSAGE_ID.exec(id)?.[1] ?? '')?.find((output) => output.type === 'message' && output.id === id);
      if (item) items.set(id, asChatMessage([item]) ?? { role: 'assistant', content: '' });
    });
    return { previous, items };
  }

  /** The response object's JSON as it was sent, or null (unknown, another payer's, expired or deleted). */
  async response(payerId: string, id: string): Promise<string | null> {
    if (!this.enabled) return null;
    const [kept, older] = await this.#get([keptKey(payerId, id), responseKey(payerId, id)]);
    return kept ? part(kept, RESPONSE) : (older ?? null);
  }

  /** The response's input items, or null when the response is not kept for this payer. */
  async inputItems(payerId: string, id: string): Promise<Record<string, unknown>[] | null> {
    if (!this.enabled) return null;
    const [kept, older] = await this.#get([keptKey(payerId, id), inputKey(payerId, id)]);
    const json = kept ? part(kept, INPUT) : older;
    return json ? (JSON.parse(json) as Record<string, unknown>[]) : null;
  }

  /**
   * Keeps a finished response for the retention time. Its writes are handed to the Redis client when this is
   * called, before the caller answers, and the caller need not wait for them: one connection carries a
   * client's commands to Redis in order, so any later read of this instance (`load`, `response`,
   * `inputItems`) is answered after them. The commands are never auto-pipelined (`#setNow`) and go to the
   * socket at `flush`, which the caller calls before its reply's last bytes: they are in the kernel before
   * the reply, so a read through another instance, which starts only once the client has the reply, reaches
   * Redis after them. On a cluster the SETs are
   * auto-pipelined, sent from a `setImmediate`: there only this instance's reads are ordered.
   */
  async save(payerId: string, responseId: string, record: ResponseRecord): Promise<void> {
    if (!this.enabled) return;
    const key = keptKey(payerId, responseId);
    const kept = [record.response, record.input, record.conversation];
    const redis = this.#redis;
    if (redis && !redis.isCluster) {
      this.#hold(redis as Redis);
      await this.#setNow(redis as Redis, key, kept);
      return;
    }
    if (redis) {
      await redis.set(key, kept.join('\n'), 'EX', this.#ttlSeconds);
      return;
    }
    this.#memory.delete(key);
    this.#memory.set(key, { json: kept.join('\n'), expiresAt: Date.now() + this.#ttlSeconds * 1000 });
    for (const key of this.#memory.keys()) {
      if (this.#memory.size <= MEMORY_ENTRIES) break;
      this.#memory.delete(key);
    }
  }

  /**
   * Corks the connection until `flush`, so Redis gets a response's SETs in one read (one wake-up): at the
   * end of this tick, or sooner when the caller's reply ends first (`replying`).
   */
  #hold(redis: Redis): void {
    if (this.#held) return;
    this.#held = redis.stream;
    this.#held.cork();
    process.nextTick(this.flush);
  }

  #held: Redis['stream'] | null = null;

  /** Writes what `save` holds to the socket (a no-op when it holds nothing). */
  readonly flush = (): void => {
    const stream = this.#held;
    this.#held = null;
    stream?.uncork();
  };

  /** `SET key <parts joined by newlines> EX ttl`, written to the socket now (`infra/redis-written.ts`). */
  #setNow(redis: Redis, key: string, parts: readonly string[]): Promise<unknown> {
    return setNow(redis, key, parts, { unit: 'EX', value: this.#ttlSeconds });
  }

  /**
   * Forgets a response: its object, input items, conversation and message items. False when there was none
   * for this payer.
   */
  async delete(payerId: string, id: string): Promise<boolean> {
    const json = await this.response(payerId, id);
    if (json === null) return false;
    const output = (JSON.parse(json) as { output?: { type?: string; id?: string }[] }).output ?? [];
    const keys = [keptKey(payerId, id), responseKey(payerId, id), inputKey(payerId, id), conversationKey(payerId, id), ...output.filter((item) => item.type === 'message' && item.id).map((item) => itemKey(payerId, item.id!))];
    if (this.#redis) {
      // One DEL a key: the keys of different ids hash to different cluster slots.
      const deleted = await Promise.all(keys.map((key) => this.#redis!.del(key)));
      return deleted[0]! + deleted[1]! > 0;
    }
    for (const key of keys) this.#memory.delete(key);
    return true;
  }

  /** The response object of a kept response (its value's first part), or null. */
  async #responsePart(key: string): Promise<string | null> {
    if (this.#redis) return (this.#redis as unknown as ResponsePartCommand).svcResponsePart(key);
    const [kept] = await this.#get([key]);
    return kept ? part(kept, RESPONSE) : null;
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

/** The parts of a kept response, in the order they are joined. */
const RESPONSE = 0;
const INPUT = 1;
const CONVERSATION = 2;

/** One part of a kept response's value (`save`). */
function part(kept: string, index: number): string {
  let start = 0;
  for (let i = 0; i < index; i++) start = kept.indexOf('\n', start) + 1;
  const end = index === CONVERSATION ? kept.length : kept.indexOf('\n', start);
  return kept.slice(start, end);
}

/** A response, as kept: its object, input items and conversation. */
function keptKey(payerId: string, id: string): string {
  return `responses:${payerId}:${id}:kept`;
}

/** An older svc's keys for a response's parts and its message items (read and deleted, never written). */
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

/**
 * The short cache of identical queries (`search.cacheSeconds`): in Redis when configured, so every
 * instance shares it (keys under the configured prefix, which ioredis prepends), in process otherwise.
 * Values are the serialised `svc.search.v1`, so a hit can never alias an object a caller mutated.
 */
import type { RedisClient, RedisLayer } from '../../infra/redis.ts';

export interface SearchCache {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
}

/** Where cached answers live in Redis, under the configured key prefix. */
export const searchCacheKeyPrefix = 'search:cache:';

export function searchCacheFor(layer: RedisLayer): SearchCache {
  return layer.redis ? new RedisSearchCache(layer.redis) : new MemorySearchCache();
}

class RedisSearchCache implements SearchCache {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  get(key: string): Promise<string | null> {
    return this.#redis.get(searchCacheKeyPrefix + key);
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.#redis.set(searchCacheKeyPrefix + key, value, 'EX', ttlSeconds);
  }
}

/** Bounded: past `maxEntries` the oldest entry goes (a Map iterates in insertion order). */
export class MemorySearchCache implements SearchCache {
  readonly #entries = new Map<string, { value: string; expiresAt: number }>();
  readonly #maxEntries: number;

  constructor(maxEntries = 1000) {
    this.#maxEntries = maxEntries;
  }

  async get(key: string): Promise<string | null> {
    const entry = this.#entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return null;
    }
    return entry.value;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: Date.now() + ttlSeconds * 1000 });
    while (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

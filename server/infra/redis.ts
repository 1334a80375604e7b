/**
 * Redis, or its in-process stand-in when `redis.url` is unset (single-instance mode). Domains that need
 * shared state across instances (rate limits, quota reservations, revocations, subscriptions) take the
 * `redis` client when present and their in-process implementation otherwise.
 */
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { withTimeout } from './deadline.ts';

export interface PubSub {
  publish(channel: string, message: string): Promise<void>;
  /** Returns the function that unsubscribes. */
  subscribe(channel: string, handler: (message: string) => void): () => void;
}

export interface RedisLayer {
  mode: 'redis' | 'in-process';
  /** The command connection; null in single-instance mode. */
  redis: Redis | null;
  /** Prepended to every key (by ioredis) and every pub/sub channel (by `pubsub`). */
  keyPrefix: string;
  /** A second connection in subscriber mode (for GraphQL subscriptions fan-out); null in single-instance mode. */
  subscriber: Redis | null;
  pubsub: PubSub;
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function openRedis(config: Config, log: Logger): Promise<RedisLayer> {
  const url = config.redis.url;
  if (!url) {
    log.info('redis: not configured, running in single-instance mode with in-process rate limits, quota and pub/sub');
    return inProcessLayer(config.redis.keyPrefix);
  }
  const options = {
    // Fail fast instead of queueing: admission must fail closed when Redis is away (SECURITY "Admission").
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: true,
    retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
  };
  // A Redis that accepts connections but stops answering must not hang admission: fail after 2 s (→ 503).
  const commandTimeout = 2000;
  const keyPrefix = config.redis.keyPrefix;
  // Auto-pipelining: commands issued in the same tick (e.g. admissions of requests that arrived together)
  // go out in one write — fewer syscalls on the gateway's hot path, same ordering and results.
  const redis = new Redis(url, { ...options, keyPrefix, commandTimeout, connectionName: 'svc', enableAutoPipelining: true });
  const subscriber = new Redis(url, { ...options, connectionName: 'svc-sub', enableOfflineQueue: true });
  for (const client of [redis, subscriber]) client.on('error', (error) => log.warn({ err: error.message }, 'redis connection error'));
  try {
    await Promise.all([redis.connect(), subscriber.connect()]);
  } catch (error) {
    redis.disconnect();
    subscriber.disconnect();
    throw new Error(`cannot connect to Redis at REDIS_URL: ${(error as Error).message}`, { cause: error });
  }
  log.info('redis: connected');
  return {
    mode: 'redis',
    redis,
    keyPrefix,
    subscriber,
    pubsub: redisPubSub(redis, subscriber, keyPrefix),
    ping: async (timeoutMs = 2000) => {
      await withTimeout(redis.ping(), timeoutMs, 'redis');
    },
    close: async () => {
      await Promise.allSettled([redis.quit(), subscriber.quit()]);
    },
  };
}

function inProcessLayer(keyPrefix: string): RedisLayer {
  const emitter = new EventEmitter().setMaxListeners(0);
  return {
    mode: 'in-process',
    redis: null,
    keyPrefix,
    subscriber: null,
    pubsub: {
      publish: async (channel, message) => {
        emitter.emit(channel, message);
      },
      subscribe: (channel, handler) => {
        emitter.on(channel, handler);
        return () => emitter.off(channel, handler);
      },
    },
    ping: async () => undefined,
    close: async () => undefined,
  };
}

/** Channel pub/sub over a dedicated subscriber connection; handlers are multiplexed per channel. */
function redisPubSub(redis: Redis, subscriber: Redis, prefix: string): PubSub {
  const handlers = new Map<string, Set<(message: string) => void>>();
  subscriber.on('message', (channel: string, message: string) => {
    for (const handler of handlers.get(channel) ?? []) handler(message);
  });
  return {
    publish: async (channel, message) => {
      await redis.publish(prefix + channel, message);
    },
    subscribe: (name, handler) => {
      const channel = prefix + name;
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
        subscriber.subscribe(channel).catch(() => undefined); // resubscribed by ioredis on reconnect
      }
      set.add(handler);
      return () => {
        set.delete(handler);
        if (set.size === 0) {
          handlers.delete(channel);
          subscriber.unsubscribe(channel).catch(() => undefined); // a dead connection has no subscriptions left
        }
      };
    },
  };
}

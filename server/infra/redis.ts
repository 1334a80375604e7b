/**
 * Redis, or its in-process stand-in when `redis.url` is unset (single-instance mode). Domains that need
 * shared state across instances (rate limits, quota reservations, revocations, subscriptions) take the
 * `redis` client when present and their in-process implementation otherwise.
 */
import { EventEmitter } from 'node:events';
import { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { withTimeout } from './deadline.ts';

export interface PubSub {
  publish(channel: string, message: string): Promise<void>;
  /** Returns the function that unsubscribes. */
  subscribe(channel: string, handler: (message: string) => void): () => void;
}

/** One Redis server, or a Redis Cluster (same commands; multi-key commands and scripts must stay in one slot). */
export type RedisClient = Redis | Cluster;

export interface RedisLayer {
  mode: 'redis' | 'in-process';
  /** True when `REDIS_URL` names a Redis Cluster: keys a script or multi-key command touches together carry one hash tag. */
  cluster: boolean;
  /** The command connection; null in single-instance mode. */
  redis: RedisClient | null;
  /** Prepended to every key (by ioredis) and every pub/sub channel (by `pubsub`). */
  keyPrefix: string;
  /** A second connection in subscriber mode (for GraphQL subscriptions fan-out); null in single-instance mode. */
  subscriber: RedisClient | null;
  pubsub: PubSub;
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The Lua commands svc defines (`defineCommand`). On a cluster, ioredis's auto-pipelining groups a command
 * by its first argument, which for these is the key count, not a key: they are sent on their own (each one
 * still goes to the node of its keys' slot). Add a new script's command name here.
 */
export const scriptCommands = ['svcSettle', 'svcRaise', 'svcHeartbeat', 'svcDeadInstances', 'svcRateLimit', 'svcRateRefund', 'svcConnectionAdd', 'svcConnectionTake', 'svcLease', 'svcRelease', 'svcResponsePart'];

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
  const nodes = clusterNodes(url);
  if (nodes && keyPrefix.includes('{')) throw new Error('redis.keyPrefix must not contain "{" with a Redis Cluster (it would become every key\'s hash tag)');
  const redis: RedisClient = nodes
    ? new Cluster(nodes.nodes, clusterOptions(nodes, { ...options, keyPrefix, commandTimeout, connectionName: 'svc' }, { keyPrefix, enableAutoPipelining: true, autoPipeliningIgnoredCommands: scriptCommands, enableOfflineQueue: false }))
    : new Redis(url, { ...options, keyPrefix, commandTimeout, connectionName: 'svc', enableAutoPipelining: true });
  const subscriber: RedisClient = nodes
    ? new Cluster(nodes.nodes, clusterOptions(nodes, { ...options, connectionName: 'svc-sub' }, { enableOfflineQueue: true }))
    : new Redis(url, { ...options, connectionName: 'svc-sub', enableOfflineQueue: true });
  for (const client of [redis, subscriber]) client.on('error', (error) => log.warn({ err: error.message }, 'redis connection error'));
  try {
    await Promise.all([redis.connect(), subscriber.connect()]);
  } catch (error) {
    redis.disconnect();
    subscriber.disconnect();
    throw new Error(`cannot connect to Redis at REDIS_URL: ${(error as Error).message}`, { cause: error });
  }
  log.info(nodes ? { nodes: nodes.nodes.length } : {}, nodes ? 'redis: connected to a cluster' : 'redis: connected');
  return {
    mode: 'redis',
    cluster: nodes !== null,
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
    cluster: false,
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
function redisPubSub(redis: RedisClient, subscriber: RedisClient, prefix: string): PubSub {
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

interface ClusterNodes {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/**
 * The cluster's seed nodes when `REDIS_URL` names a Redis Cluster, else null: `redis+cluster://[user:pass@]host:port,host:port`
 * (`rediss+cluster://` for TLS), or a comma-separated list of `redis://host:port` URLs. One node is enough to
 * find the others; several let svc start while one is down.
 */
export function clusterNodes(url: string): ClusterNodes | null {
  const scheme = /^(rediss?)\+cluster:\/\//.exec(url);
  if (!scheme && !url.includes(',')) return null;
  const tls = scheme ? scheme[1] === 'rediss' : url.startsWith('rediss://');
  const rest = scheme ? url.slice(scheme[0].length) : url;
  let username: string | undefined;
  let password: string | undefined;
  const nodes = rest.split(',').map((part) => {
    const parsed = new URL(/^[a-z]+:\/\//.test(part.trim()) ? part.trim() : `redis://${part.trim()}`);
    if (parsed.username && username === undefined) username = decodeURIComponent(parsed.username);
    if (parsed.password && password === undefined) password = decodeURIComponent(parsed.password);
    if (!parsed.hostname) throw new Error(`REDIS_URL: cluster node ${JSON.stringify(part)} has no host`);
    return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port || 6379) };
  });
  return { nodes, username, password, tls };
}

function clusterOptions(
  nodes: ClusterNodes,
  redisOptions: Record<string, unknown>,
  own: { keyPrefix?: string; enableAutoPipelining?: boolean; autoPipeliningIgnoredCommands?: string[]; enableOfflineQueue: boolean },
): ConstructorParameters<typeof Cluster>[1] {
  const { enableOfflineQueue: _queue, keyPrefix: _prefix, retryStrategy, lazyConnect, maxRetriesPerRequest, ...perNode } = redisOptions;
  return {
    ...own,
    lazyConnect: lazyConnect as boolean,
    maxRedirections: 16,
    clusterRetryStrategy: retryStrategy as (attempt: number) => number,
    redisOptions: {
      ...perNode,
      maxRetriesPerRequest: maxRetriesPerRequest as number,
      ...(nodes.username ? { username: nodes.username } : {}),
      ...(nodes.password ? { password: nodes.password } : {}),
      ...(nodes.tls ? { tls: {} } : {}),
    },
  };
}

/**
 * The GraphQL subscriptions' pub/sub: graphql-yoga's `createPubSub`, fanned out across instances through
 * Redis (`@graphql-yoga/redis-event-target`) when Redis is configured, in process otherwise.
 */
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub, type PubSub } from 'graphql-yoga';
import type { RedisClient, RedisLayer } from './redis.ts';

/** Topic → publish arguments, as graphql-yoga types them (`[payload]` or `[id, payload]`). */
type TopicMap = Record<string, [unknown] | [string | number, unknown]>;

export function createPubSubFor<Topics extends TopicMap>(layer: RedisLayer, onError: (error: unknown) => void): PubSub<Topics> {
  const { redis, subscriber } = layer;
  if (!redis || !subscriber) return createPubSub<Topics>();
  return createPubSub<Topics>({
    eventTarget: createRedisEventTarget({ publishClient: settled(redis, onError), subscribeClient: settled(subscriber, onError) }),
  });
}

/**
 * The event target fires `publish`/`subscribe`/`unsubscribe` and drops the promise; while Redis is away the
 * command connection rejects at once (no offline queue), and an unhandled rejection would end the process.
 * These three commands get a handler here; everything else is the client itself.
 */
function settled<C extends RedisClient>(client: C, onError: (error: unknown) => void): C {
  const guarded = new Set<PropertyKey>(['publish', 'subscribe', 'unsubscribe']);
  return new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (!guarded.has(property)) return value.bind(target);
      return (...args: unknown[]) => (value.apply(target, args) as Promise<unknown>).catch(onError);
    },
  });
}

/**
 * The short cache of identical queries: in Redis (shared by every instance, under the configured key
 * prefix, expiring after search.cacheSeconds) or in process; a hit never reaches the provider, and a
 * cache that fails is a miss, never a failed search.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../../server/config/config.ts';
import { openRedis, type RedisLayer } from '../../../server/infra/redis.ts';
import { SearxngProvider } from '../../../server/modules/search/providers/searxng.provider.ts';
import { searchCacheFor, searchCacheKeyPrefix } from '../../../server/modules/search/search.cache.ts';
import { SearchService } from '../../../server/modules/search/search.service.ts';
import { startScriptedSearxng, type ScriptedSearxng } from '../../fixtures/scripted-searxng.ts';
import { testRedisUrl } from '../../helpers/env.ts';
import { assertSvcSearchV1 } from '../../helpers/search-schema.ts';

const log = pino({ level: 'silent' });
const keyPrefix = `svc-test:${randomBytes(4).toString('hex')}:`;
let searxng: ScriptedSearxng;
let inspect: Redis;
const layers: RedisLayer[] = [];

function configWith(search: Record<string, unknown>, redis: 'redis' | 'in-process' = 'redis'): Config {
  const url = redis === 'redis' ? testRedisUrl : undefined;
  return parseConfig({ redis: { url, keyPrefix }, search: { provider: 'searxng', searxng: { url: searxng.url }, ...search } });
}

async function service(config: Config, onCacheError?: (error: unknown) => void): Promise<SearchService> {
  const layer = await openRedis(config, log);
  layers.push(layer);
  return new SearchService(config, new SearxngProvider(config.search.searxng), searchCacheFor(layer), onCacheError);
}

beforeAll(async () => {
  searxng = await startScriptedSearxng();
  inspect = new Redis(testRedisUrl);
});

afterAll(async () => {
  await Promise.all(layers.map((layer) => layer.close()));
  const keys = await inspect.keys(`${keyPrefix}*`);
  if (keys.length > 0) await inspect.del(...keys);
  inspect.disconnect();
  await searxng?.close();
});

beforeEach(() => {
  searxng.mode = 'ok';
  searxng.requests.length = 0;
});

describe('search cache on Redis', () => {
  it('answers an identical query from Redis: provider asked once, key under the prefix with the configured TTL', async () => {
    const search = await service(configWith({ cacheSeconds: 30 }));
    const first = await search.search('cached query');
    expect(first.cacheHit).toBe(false);
    const second = await search.search('  cached   query ');
    expect(second.cacheHit).toBe(true);
    expect(searxng.requests).toHaveLength(1);
    assertSvcSearchV1(second.result);
    // The same answer, but its own id and latency.
    expect(second.result.results).toEqual(first.result.results);
    expect(second.result.warnings).toEqual(first.result.warnings);
    expect(second.result.id).not.toBe(first.result.id);

    const keys = await inspect.keys(`${keyPrefix}${searchCacheKeyPrefix}*`);
    expect(keys).toHaveLength(1);
    const ttl = await inspect.ttl(keys[0]!);
    expect(ttl).toBeGreaterThan(25);
    expect(ttl).toBeLessThanOrEqual(30);
  });

  it('is shared by instances: a second instance is answered from the first one\'s search', async () => {
    const config = configWith({ cacheSeconds: 30 });
    const [a, b] = [await service(config), await service(config)];
    expect((await a.search('shared across instances')).cacheHit).toBe(false);
    expect((await b.search('shared across instances')).cacheHit).toBe(true);
    expect(searxng.requests).toHaveLength(1);
  });

  it('a different query or maxResults is a miss; failures are never cached', async () => {
    const search = await service(configWith({ cacheSeconds: 30 }));
    await search.search('miss one');
    expect((await search.search('miss one', { maxResults: 2 })).cacheHit).toBe(false);
    expect((await search.search('Miss one')).cacheHit).toBe(false);
    expect(searxng.requests).toHaveLength(3);

    searxng.mode = 'error';
    await expect(search.search('fails first')).rejects.toMatchObject({ code: 'upstream_error' });
    searxng.mode = 'ok';
    expect((await search.search('fails first')).cacheHit).toBe(false);
  });

  it('a Redis that fails is a miss, reported, and the search still answers', async () => {
    const errors: unknown[] = [];
    const config = configWith({ cacheSeconds: 30 });
    const layer = await openRedis(config, log);
    const search = new SearchService(config, new SearxngProvider(config.search.searxng), searchCacheFor(layer), (error) => errors.push(error));
    await layer.close();
    const { result, cacheHit } = await search.search('redis is gone');
    expect(cacheHit).toBe(false);
    assertSvcSearchV1(result);
    expect(errors.length).toBeGreaterThanOrEqual(1);
  });
});

describe('search cache in process', () => {
  it('without Redis the cache is in memory and expires after cacheSeconds', async () => {
    const keysBefore = await inspect.keys(`${keyPrefix}${searchCacheKeyPrefix}*`);
    const search = await service(configWith({ cacheSeconds: 1 }, 'in-process'));
    expect((await search.search('memory')).cacheHit).toBe(false);
    expect((await search.search('memory')).cacheHit).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await search.search('memory')).cacheHit).toBe(false);
    expect(searxng.requests).toHaveLength(2);
    expect(await inspect.keys(`${keyPrefix}${searchCacheKeyPrefix}*`)).toEqual(keysBefore);
  });

  it('cacheSeconds 0 turns the cache off', async () => {
    const search = await service(configWith({ cacheSeconds: 0 }));
    const keysBefore = await inspect.keys(`${keyPrefix}${searchCacheKeyPrefix}*`);
    await search.search('uncached');
    expect((await search.search('uncached')).cacheHit).toBe(false);
    expect(searxng.requests).toHaveLength(2);
    expect(await inspect.keys(`${keyPrefix}${searchCacheKeyPrefix}*`)).toEqual(keysBefore);
  });
});

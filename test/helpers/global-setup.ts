/** Fails the whole run at once, with a clear message, when PostgreSQL or Redis is not reachable. */
import { Redis } from 'ioredis';
import pg from 'pg';
import { testDatabaseUrl, testRedisUrl } from './env.ts';

export default async function setup(): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(`PostgreSQL is not reachable at TEST_DATABASE_URL=${testDatabaseUrl}: ${(error as Error).message}`, { cause: error });
  } finally {
    await client.end().catch(() => undefined);
  }
  const redis = new Redis(testRedisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`Redis is not reachable at TEST_REDIS_URL=${testRedisUrl}: ${(error as Error).message}`, { cause: error });
  } finally {
    redis.disconnect();
  }
}

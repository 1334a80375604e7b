import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testDatabaseUrl } from './env.ts';

export interface TestDatabase {
  url: string;
  name: string;
  /** Runs SQL as the admin user against the server (not inside the test database). */
  admin(sql: string): Promise<pg.QueryResult>;
  /** Runs SQL inside the test database. */
  query(sql: string, params?: unknown[]): Promise<pg.QueryResult>;
  drop(): Promise<void>;
}

/** A fresh, empty PostgreSQL database for one test file; each test owns its data. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: testDatabaseUrl });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database "${name}"`);
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    admin,
    query: async (sql, params) => {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        return await client.query(sql, params);
      } finally {
        await client.end();
      }
    },
    drop: async () => {
      await admin(`drop database if exists "${name}" with (force)`);
    },
  };
}

/**
 * `CopyIn` on one live PostgreSQL connection: the statement and its rows leave in one write, so these
 * check what the protocol promises for that. Rows arrive as sent; a refused row writes nothing of its
 * batch; a refused statement is answered without waiting for its data; and either way the connection
 * is in step for the next query, the copy messages that followed the error dropped.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyIn } from '../../../server/db/copy-in.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let db: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query('create table t (n integer not null, word varchar(8) not null)');
});

afterAll(async () => {
  await client.end();
  await db.drop();
});

const copy = (sql: string, data: string) =>
  new Promise<void>((resolve, reject) => {
    const query = new CopyIn(sql, data);
    query.callback = (error) => (error ? reject(error) : resolve());
    void client.query(query as never);
  });

const rows = async () => (await client.query<{ n: number; word: string }>('select n, word from t order by n')).rows;

describe('CopyIn', () => {
  it('writes the rows, several thousand in one message', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => `${i}\tw${i % 1000}\n`).join('');
    await copy('copy t (n, word) from stdin', many);
    expect(await rows()).toHaveLength(5000);
    await client.query('truncate t');
    await copy('copy t (n, word) from stdin', '1\tone\n2\t中文\n');
    expect(await rows()).toEqual([
      { n: 1, word: 'one' },
      { n: 2, word: '中文' },
    ]);
  });

  it('writes nothing of a batch with a refused row, and the connection answers the next query', async () => {
    await expect(copy('copy t (n, word) from stdin', '3\tthree\n4\tfar too long\n5\tfive\n')).rejects.toMatchObject({ code: '22001' });
    expect(await rows()).toHaveLength(2);
    await copy('copy t (n, word) from stdin', '6\tsix\n');
    expect((await rows()).map((row) => row.n)).toEqual([1, 2, 6]);
  });

  it('answers a refused statement with its error, and drops the data sent with it', async () => {
    await expect(copy('copy nowhere (n) from stdin', '7\n8\n')).rejects.toMatchObject({ code: '42P01' });
    expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    expect((await rows()).map((row) => row.n)).toEqual([1, 2, 6]);
  });
});

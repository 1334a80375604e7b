/**
 * The embedded provider end to end, on real PostgreSQL and on PGlite: a corpus ingested by the `svc`
 * command itself (a child process, like an operator runs it), re-runs that change nothing, an edited
 * file updated, `svc search stats`, then searches through SearchService validated against the schema.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { openDatabase, type Database } from '../../../server/db/orm.ts';
import { entities } from '../../../server/modules/entities.ts';
import { openRedis, type RedisLayer } from '../../../server/infra/redis.ts';
import { createSearchService, type SearchService } from '../../../server/modules/search/search.service.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { assertSvcSearchV1 } from '../../helpers/search-schema.ts';
import { svc, writeCorpus } from './search-harness.ts';

interface Mode {
  name: string;
  /** Environment that makes the CLI use this database. */
  env: Record<string, string>;
  /** The same database as config for the in-process service. */
  config: Record<string, unknown>;
  cleanup(): Promise<void>;
}

async function postgresMode(): Promise<Mode> {
  const database: TestDatabase = await createTestDatabase();
  return { name: 'PostgreSQL', env: { DATABASE_URL: database.url }, config: { database: { url: database.url } }, cleanup: () => database.drop() };
}

function pgliteMode(): Mode {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-pglite-search-'));
  const configFile = join(dataDir, 'svc.yaml');
  writeFileSync(configFile, `database:\n  dataDir: ${JSON.stringify(dataDir)}\n`);
  return { name: 'PGlite', env: { SVC_CONFIG: configFile }, config: { database: { dataDir } }, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

describe.each([
  ['PostgreSQL', postgresMode],
  ['PGlite', async () => pgliteMode()],
])('embedded search on %s', (name, makeMode) => {
  let mode: Mode;
  let corpus: string;
  let db: Database | undefined;
  let redis: RedisLayer | undefined;
  let search: SearchService;

  beforeAll(async () => {
    mode = await makeMode();
    corpus = writeCorpus();
  });

  afterAll(async () => {
    await redis?.close();
    await db?.close();
    await mode?.cleanup();
    rmSync(corpus, { recursive: true, force: true });
  });

  it('svc search ingest adds the corpus, a re-run changes nothing, an edit updates one document', async () => {
    const args = ['search', 'ingest', corpus, '--base-url', 'https://docs.example.com/'];
    const first = await svc(args, mode.env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    // Not a terminal: one plain line per source, in path order, then the summary.
    expect(first.stdout.split('\n').filter(Boolean)).toEqual([
      `added      ${join(corpus, 'external.md')} → https://blog.example.org/posts/launch`,
      `added      ${join(corpus, 'guide/install.md')} → https://docs.example.com/guide/install.md`,
      `added      ${join(corpus, 'guide/pricing.html')} → https://docs.example.com/guide/pricing.html`,
      `added      ${join(corpus, 'notes/quotas.txt')} → https://docs.example.com/notes/quotas.txt`,
      expect.stringMatching(/^4 added, 0 updated, 0 unchanged, 0 failed \(4 sources, \d+\.\d s\)\.$/),
    ]);

    const again = await svc(args, mode.env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^0 added, 0 updated, 4 unchanged, 0 failed/m);

    writeFileSync(join(corpus, 'notes', 'quotas.txt'), 'Quotas and pools\n\nEvery account has daily, weekly and monthly pools per model class; staff may override them.\n');
    const edited = await svc(args, mode.env);
    expect(edited.code).toBe(0);
    expect(edited.stdout).toContain(`updated    ${join(corpus, 'notes/quotas.txt')}`);
    expect(edited.stdout).toMatch(/^0 added, 1 updated, 3 unchanged, 0 failed/m);
  });

  it('a file without a URL fails clearly, and the run exits 1 without stopping the others', async () => {
    const loose = mkdtempSync(join(tmpdir(), 'svc-loose-'));
    writeFileSync(join(loose, 'a.md'), '# No URL here\n');
    writeFileSync(join(loose, 'b.md'), '---\nurl: https://docs.example.com/b\n---\n# Has one\n');
    const run = await svc(['search', 'ingest', join(loose, 'a.md'), join(loose, 'b.md'), join(loose, 'missing.md')], mode.env);
    rmSync(loose, { recursive: true, force: true });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`failed     ${join(loose, 'a.md')}: no URL: give it front matter \`url: https://…\` or run with --base-url`);
    expect(run.stdout).toContain(`added      ${join(loose, 'b.md')} → https://docs.example.com/b`);
    expect(run.stdout).toContain(`failed     ${join(loose, 'missing.md')}: no such file or directory`);
    expect(run.stdout).toMatch(/^1 added, 0 updated, 0 unchanged, 2 failed/m);
  });

  it('svc search stats counts documents, size, the last run and top domains', async () => {
    const run = await svc(['search', 'stats'], mode.env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('Documents:   5');
    expect(lines[1]).toMatch(/^Total size: {2}\d+ B$/);
    expect(lines[2]).toMatch(/^Last ingest: \d{4}-\d{2}-\d{2}T[\d:.]+Z \(1 added, 0 updated, 0 unchanged, 2 failed\)$/);
    expect(lines[3]).toMatch(/^Last change: \d{4}-/);
    expect(lines.slice(4, 7)).toEqual(['Top domains:', '  4  docs.example.com', '  1  blog.example.org']);
  });

  it('finds ingested documents through SearchService, ranked, with headline snippets', async () => {
    const config = parseConfig({ ...mode.config, search: { provider: 'embedded' } });
    const log = pino({ level: 'silent' });
    db = await openDatabase(config, log, entities);
    redis = await openRedis(config, log);
    search = createSearchService(config, db, redis);

    const { result } = await search.search('installing npm');
    assertSvcSearchV1(result);
    expect(result.provider).toBe('embedded');
    expect(result.results[0]).toMatchObject({
      rank: 1,
      title: 'Installing svc',
      url: 'https://docs.example.com/guide/install.md',
      domain: 'docs.example.com',
      publishedAt: '2024-03-01T00:00:00.000Z',
      engine: 'embedded',
    });
    expect(result.results[0]!.snippet).toContain('Install the gateway with npm ci');
    expect(result.results[0]!.score).toBeGreaterThan(0);
    expect(result.results[0]!.score).toBeLessThanOrEqual(1);

    const pricing = (await search.search('pricing')).result;
    expect(pricing.results[0]).toMatchObject({ title: 'Pricing and plans', publishedAt: '2024-05-02T08:00:00.000Z' });

    // Scripts and styles were never indexed.
    expect((await search.search('secretword')).result.results).toEqual([]);
    expect((await search.search('zebra')).result.results).toEqual([]);

    // Web-search syntax: OR, exclusion, phrases.
    const either = (await search.search('launched or quotas')).result;
    expect(either.results.map((r) => r.url).sort()).toEqual(['https://blog.example.org/posts/launch', 'https://docs.example.com/notes/quotas.txt']);
    expect((await search.search('gateway -launched')).result.results.map((r) => r.url)).toEqual(['https://docs.example.com/guide/install.md']);
    expect((await search.search('"monthly pools"')).result.results.map((r) => r.url)).toEqual(['https://docs.example.com/notes/quotas.txt']);
    expect((await search.search('"pools monthly"')).result.results).toEqual([]);

    // Ranked by relevance, best first, at most maxResults.
    const gateway = (await search.search('gateway', { maxResults: 1 })).result;
    expect(gateway.results).toHaveLength(1);
    const all = (await search.search('gateway')).result;
    expect(all.results.map((r) => r.score)).toEqual([...all.results.map((r) => r.score)].sort((a, b) => b - a));

    const stopWords = (await search.search('the and of')).result;
    assertSvcSearchV1(stopWords);
    expect(stopWords.results).toEqual([]);
    expect(stopWords.warnings).toEqual(['The query has no searchable words (only common words or punctuation), so it matched nothing.']);
    expect((await search.search('xylophone')).result.warnings).toEqual([]);
  });

  it.skipIf(name !== 'PGlite')('refuses to ingest into a PGlite directory another process has open', async () => {
    // The previous test still holds the database open in this (the test) process.
    const run = await svc(['search', 'stats'], mode.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^svc: the embedded database in \\S+ is in use by process ${process.pid} \\(a running svc\\?\\): stop it first, or set DATABASE_URL to use PostgreSQL\n$`));
    await db!.close();
    db = undefined;
    expect((await svc(['search', 'stats'], mode.env)).code).toBe(0);
  });
});

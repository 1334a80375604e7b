/**
 * `svc search ingest urls.txt`: each listed page fetched (with a timeout and a size cap; the local test site
 * listed in search.ingest.allowHttpHosts and allowPrivateHosts, see ingest-ssrf.test.ts for the refusals) and
 * ingested under the URL as listed; failures reported per line. And the progress bar on a terminal.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchIngest } from '../../../server/cli/search-commands.ts';
import { parseConfig } from '../../../server/config/config.ts';
import { openDatabase } from '../../../server/db/orm.ts';
import { entities } from '../../../server/modules/entities.ts';
import { EmbeddedProvider } from '../../../server/modules/search/providers/embedded.provider.ts';
import { MemorySearchCache } from '../../../server/modules/search/search.cache.ts';
import { SearchService } from '../../../server/modules/search/search.service.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { assertSvcSearchV1 } from '../../helpers/search-schema.ts';
import { svc, writeCorpus } from './search-harness.ts';

let database: TestDatabase;
let site: Server;
let origin: string;
const dir = mkdtempSync(join(tmpdir(), 'svc-urls-'));

beforeAll(async () => {
  database = await createTestDatabase();
  site = createServer((request, response) => {
    const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': type, ...headers });
      response.end(body);
    };
    switch (request.url) {
      case '/page.html':
        return send(200, 'text/html; charset=utf-8', '<html><head><title>Served page</title></head><body><p>Facts about the kangaroo.</p></body></html>');
      case '/doc.md':
        return send(200, 'text/markdown', '# Served markdown\n\nWombat facts.');
      case '/latin1.txt':
        return send(200, 'text/plain; charset=iso-8859-1', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x6f, 0x74, 0x65, 0x73])); // "café notes"
      case '/moved':
        return send(302, 'text/plain', '', { location: '/doc.md' });
      case '/big.html': {
        // Declared too large: refused before reading.
        const body = `<p>${'x'.repeat(300_000)}</p>`;
        return send(200, 'text/html', body, { 'content-length': String(Buffer.byteLength(body)) });
      }
      case '/big-stream.html': {
        // No content-length: the cap must hold while reading.
        response.writeHead(200, { 'content-type': 'text/html' });
        for (let i = 0; i < 30; i++) response.write(`<p>${'y'.repeat(10_000)}</p>`);
        return response.end();
      }
      case '/slow.html': {
        const timer = setTimeout(() => send(200, 'text/html', '<p>late</p>'), 3000);
        response.on('close', () => clearTimeout(timer));
        return;
      }
      case '/paper.pdf':
        return send(200, 'application/pdf', '%PDF-1.7');
      default:
        return send(404, 'text/html', 'not found');
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterAll(async () => {
  site?.closeAllConnections();
  await new Promise<void>((resolve) => site?.close(() => resolve()));
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('svc search ingest urls.txt', () => {
  it('fetches each page, ingests what it can read and says why the others failed', async () => {
    const list = join(dir, 'urls.txt');
    const urls = ['page.html', 'doc.md', 'latin1.txt', 'moved', 'big.html', 'big-stream.html', 'slow.html', 'paper.pdf', 'missing'].map((path) => `${origin}/${path}`);
    writeFileSync(list, ['# pages to index', '', ...urls, 'ftp://files.example.com/x.txt', ''].join('\n'));
    // The test site is plain http on loopback: both listed, as an operator would list an intranet docs host.
    const configFile = join(dir, 'svc.yaml');
    writeFileSync(configFile, 'search:\n  ingest:\n    allowHttpHosts: [127.0.0.1]\n    allowPrivateHosts: [127.0.0.1]\n');
    const env = { DATABASE_URL: database.url, SVC_CONFIG: configFile };
    const run = await svc(['search', 'ingest', list, '--timeout-ms', '500', '--max-bytes', '100000'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n').filter(Boolean)).toEqual([
      `added      ${origin}/page.html`,
      `added      ${origin}/doc.md`,
      `added      ${origin}/latin1.txt`,
      `added      ${origin}/moved`,
      `failed     ${origin}/big.html: larger than 98 KiB (293 KiB)`,
      `failed     ${origin}/big-stream.html: larger than 98 KiB`,
      `failed     ${origin}/slow.html: no complete answer within 500 ms`,
      `failed     ${origin}/paper.pdf: unsupported content type application/pdf: only HTML, Markdown and plain text are ingested`,
      `failed     ${origin}/missing: the server answered HTTP 404`,
      'failed     ftp://files.example.com/x.txt: only http and https URLs are fetched, not ftp',
      expect.stringMatching(/^4 added, 0 updated, 0 unchanged, 6 failed \(10 sources, \d+\.\d s\)\.$/),
    ]);

    const again = await svc(['search', 'ingest', list, '--timeout-ms', '500', '--max-bytes', '100000'], env);
    expect(again.stdout).toMatch(/^0 added, 0 updated, 4 unchanged, 6 failed/m);

    // A URL given directly is one page.
    const direct = await svc(['search', 'ingest', `${origin}/page.html`], env);
    expect([direct.code, direct.stdout.split('\n')[0]]).toEqual([0, `unchanged  ${origin}/page.html`]);

    const config = parseConfig({ database: { url: database.url } });
    const db = await openDatabase(config, pino({ level: 'silent' }), entities);
    try {
      const service = new SearchService(config, new EmbeddedProvider(db), new MemorySearchCache());
      const kangaroo = (await service.search('kangaroo')).result;
      assertSvcSearchV1(kangaroo);
      expect(kangaroo.results.map((r) => [r.title, r.url, r.domain])).toEqual([['Served page', `${origin}/page.html`, '127.0.0.1']]);
      // Redirected: stored under the URL as listed, with the content it led to.
      expect((await service.search('wombat')).result.results.map((r) => [r.title, r.url]).sort()).toEqual([
        ['Served markdown', `${origin}/doc.md`],
        ['Served markdown', `${origin}/moved`],
      ]);
      expect((await service.search('café')).result.results.map((r) => r.title)).toEqual(['latin1']);
    } finally {
      await db.close();
    }
  });

  it('draws a progress bar on a terminal, failures printed above it', async () => {
    const corpus = writeCorpus();
    writeFileSync(join(corpus, 'broken.md'), '---\nurl: [unclosed\n---\n# x\n');
    const writes: string[] = [];
    const lines: string[] = [];
    const code = await searchIngest({ DATABASE_URL: database.url }, [corpus], { 'base-url': 'https://tty.example.com' }, { out: (line) => lines.push(line), write: (text) => writes.push(text), tty: true, columns: 60 });
    rmSync(corpus, { recursive: true, force: true });
    expect(code).toBe(1);
    // Every draw starts by returning to the line's start and clearing it.
    const clear = '\r\x1b[K';
    expect(writes.every((text) => text.startsWith(clear))).toBe(true);
    const drawn = writes.map((text) => text.slice(clear.length));
    expect(drawn[0]).toBe('[........................] 0/5  ');
    expect(drawn.find((text) => text.startsWith('failed'))).toMatch(/^failed {5}.*broken\.md: front matter is not valid YAML: .*\n$/);
    const last = drawn.at(-2)!;
    expect(last).toMatch(/^\[#{24}\] 5\/5 {2}….{0,25}quotas\.txt$/);
    expect(last.length).toBeLessThanOrEqual(60);
    expect(drawn.at(-1)).toBe('');
    expect(lines).toEqual([expect.stringMatching(/^4 added, 0 updated, 0 unchanged, 1 failed \(5 sources, \d+\.\d s\)\.$/)]);
  });
});

/**
 * `svc search ingest` cannot be turned on this machine or its network (SECURITY "Hardening"): https only,
 * every host resolved and checked on the first request and on each redirect (at most 5), the connection
 * pinned to the address that was checked. Run as an operator runs it (the `svc` command, real sockets,
 * real DNS for `localhost`), with each refusal naming its rule; nothing refused reaches the index.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeFetch, SafeFetchRefused, type ResolvedAddress } from '../../../server/infra/safe-fetch.ts';
import { certificate } from '../../fixtures/tls-certificates.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { svc } from './search-harness.ts';

let database: TestDatabase;
let site: Server;
let secure: Server;
/** Plain http on 127.0.0.1. */
let port: number;
/** https with a certificate for localhost, on 127.0.0.1. */
let securePort: number;
const hits: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'svc-ssrf-'));
const caFile = join(dir, 'localhost-ca.pem');

function routes(request: IncomingMessage, response: ServerResponse): void {
  hits.push(`${request.headers.host}${request.url}`);
  const redirect = (location: string) => {
    response.writeHead(302, { location });
    response.end();
  };
  const url = request.url ?? '/';
  const hop = /^\/hop\/(\d+)$/.exec(url);
  if (hop) return Number(hop[1]) < 6 ? redirect(`/hop/${Number(hop[1]) + 1}`) : page(response, 'Sixth hop', 'Reached after the redirects.');
  switch (url) {
    case '/page.html':
      return page(response, 'Internal page', 'Secret platypus numbers.');
    case '/to-metadata':
      return redirect('http://169.254.169.254/latest/meta-data/iam/security-credentials/');
    case '/to-localhost':
      return redirect(`http://localhost:${port}/page.html`);
    case '/to-mapped':
      return redirect(`https://[::ffff:127.0.0.1]:${securePort}/page.html`);
    case '/to-file':
      return redirect('file:///etc/passwd');
    case '/to-plain':
      return redirect(`http://127.0.0.1:${port}/page.html`);
    default:
      response.writeHead(404);
      response.end();
  }
}

function page(response: ServerResponse, title: string, text: string): void {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end(`<html><head><title>${title}</title></head><body><p>${text}</p></body></html>`);
}

function listen(server: Server, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

async function close(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Runs `svc search ingest` with `search.ingest` as given (and the test CA trusted, as NODE_EXTRA_CA_CERTS does). */
async function ingest(urls: string[], ingestConfig: { allowHttpHosts?: string[]; allowPrivateHosts?: string[] } = {}) {
  const configFile = join(dir, `svc-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(configFile, `search:\n  ingest: ${JSON.stringify(ingestConfig)}\n`);
  const run = await svc(['search', 'ingest', ...urls, '--timeout-ms', '3000'], { DATABASE_URL: database.url, SVC_CONFIG: configFile, NODE_EXTRA_CA_CERTS: caFile });
  return { ...run, lines: run.stdout.split('\n').filter(Boolean) };
}

async function indexed(): Promise<string[]> {
  const { rows } = await database.query('select "url" from "search_document" order by "url"');
  return (rows as { url: string }[]).map((row) => row.url);
}

beforeAll(async () => {
  database = await createTestDatabase();
  writeFileSync(caFile, certificate('localhost').cert);
  site = createHttpServer(routes);
  secure = createHttpsServer(certificate('localhost'), routes);
  [port, securePort] = await Promise.all([listen(site), listen(secure)]);
});

afterAll(async () => {
  await Promise.all([close(site), close(secure)]);
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('svc search ingest refuses what it must not fetch, naming the rule', () => {
  it('https only: plain http is refused unless the host is in search.ingest.allowHttpHosts', async () => {
    const run = await ingest([`http://127.0.0.1:${port}/page.html`], { allowPrivateHosts: ['127.0.0.1'] });
    expect(run.code).toBe(1);
    expect(run.lines[0]).toBe(`failed     http://127.0.0.1:${port}/page.html: refused (https rule): plain http is not fetched from 127.0.0.1 (not in search.ingest.allowHttpHosts)`);
    expect(hits).toEqual([]);
    expect(await indexed()).toEqual([]);
  });

  it('loopback addresses are refused, as literals and behind a name that resolves to one, before any connection', async () => {
    const urls = [
      `https://127.0.0.1:${securePort}/page.html`,
      `https://localhost:${securePort}/page.html`,
      `https://[::1]:${securePort}/page.html`,
      `https://[::ffff:127.0.0.1]:${securePort}/page.html`,
      `https://2130706433:${securePort}/page.html`,
      'https://0.0.0.0/page.html',
    ];
    const run = await ingest(urls);
    expect(run.code).toBe(1);
    expect(run.lines.slice(0, -1)).toEqual([
      `failed     ${urls[0]}: refused (address rule): 127.0.0.1 is a loopback address (allowed only for hosts in search.ingest.allowPrivateHosts)`,
      expect.stringMatching(new RegExp(`^failed {5}${escape(urls[1]!)}: refused \\(address rule\\): localhost resolves to (127\\.0\\.0\\.1|::1), a loopback address \\(allowed only for hosts in search\\.ingest\\.allowPrivateHosts\\)$`)),
      `failed     ${urls[2]}: refused (address rule): ::1 is a loopback address (allowed only for hosts in search.ingest.allowPrivateHosts)`,
      `failed     ${urls[3]}: refused (address rule): ::ffff:7f00:1 (127.0.0.1) is a loopback address (allowed only for hosts in search.ingest.allowPrivateHosts)`,
      // The URL parser reads the decimal form as 127.0.0.1, and that is what is judged.
      `failed     ${urls[4]}: refused (address rule): 127.0.0.1 is a loopback address (allowed only for hosts in search.ingest.allowPrivateHosts)`,
      'failed     https://0.0.0.0/page.html: refused (address rule): 0.0.0.0 is an unspecified address (never fetched)',
    ]);
    expect(hits).toEqual([]);
    expect(await indexed()).toEqual([]);
  });

  it('every redirect is checked again: to cloud metadata, to an unlisted loopback name, to an IPv4-mapped address, to file:, and after 5 the chain stops', async () => {
    const at = (path: string) => `http://127.0.0.1:${port}${path}`;
    const run = await ingest([at('/to-metadata'), at('/to-localhost'), at('/to-mapped'), at('/to-file'), at('/hop/0'), at('/hop/1')], {
      allowHttpHosts: ['127.0.0.1', 'localhost', '169.254.169.254'],
      allowPrivateHosts: ['127.0.0.1', '169.254.169.254'],
    });
    expect(run.code).toBe(1);
    expect(run.lines.slice(0, -1)).toEqual([
      `failed     ${at('/to-metadata')}: refused (address rule): redirected to http://169.254.169.254/latest/meta-data/iam/security-credentials/; 169.254.169.254 is a cloud metadata address (never fetched)`,
      expect.stringMatching(
        new RegExp(`^failed {5}${escape(at('/to-localhost'))}: refused \\(address rule\\): redirected to http://localhost:${port}/page\\.html; localhost resolves to (127\\.0\\.0\\.1|::1), a loopback address \\(allowed only for hosts in search\\.ingest\\.allowPrivateHosts\\)$`),
      ),
      `failed     ${at('/to-mapped')}: refused (address rule): redirected to https://[::ffff:7f00:1]:${securePort}/page.html; ::ffff:7f00:1 (127.0.0.1) is a loopback address (allowed only for hosts in search.ingest.allowPrivateHosts)`,
      `failed     ${at('/to-file')}: refused (https rule): redirected to file:///etc/passwd; only https is fetched, not file`,
      `failed     ${at('/hop/0')}: refused (redirect rule): more than 5 redirects`,
      `added      ${at('/hop/1')}`,
    ]);
    // The chain to /hop/6 took exactly five redirects; the one needing six stopped before its sixth request.
    expect(hits.filter((hit) => hit.includes('/hop/')).sort()).toEqual([...[0, 1, 2, 3, 4, 5], ...[1, 2, 3, 4, 5, 6]].map((n) => `127.0.0.1:${port}/hop/${n}`).sort());
    expect(hits.some((hit) => hit.startsWith('localhost') || hit.includes('[::ffff'))).toBe(false);
    expect(await indexed()).toEqual([at('/hop/1')]);
  });

  it('a host in allowPrivateHosts is fetched over https to its private address, with its certificate checked against its name', async () => {
    hits.length = 0;
    const url = `https://localhost:${securePort}/page.html`;
    const run = await ingest([url, `https://localhost:${securePort}/to-plain`], { allowPrivateHosts: ['localhost', '127.0.0.1'] });
    expect(run.lines.slice(0, -1)).toEqual([
      `added      ${url}`,
      // Listed as private but not as http: the downgrade to plain http is refused.
      `failed     https://localhost:${securePort}/to-plain: refused (https rule): redirected to http://127.0.0.1:${port}/page.html; plain http is not fetched from 127.0.0.1 (not in search.ingest.allowHttpHosts)`,
    ]);
    expect(hits).toEqual([`localhost:${securePort}/page.html`, `localhost:${securePort}/to-plain`]);
    expect(await indexed()).toContain(url);
  });
});

describe('safeFetch', () => {
  it('connects to the address it checked, never to a second DNS answer', async () => {
    // A decoy on another loopback address: a resolver that changes its answer (DNS rebinding) points there.
    const decoyHits: string[] = [];
    const decoy = createHttpServer((request, response) => {
      decoyHits.push(request.url ?? '');
      page(response, 'Decoy', 'Should never be read.');
    });
    await new Promise<void>((resolve) => decoy.listen(port, '127.0.0.2', resolve));
    try {
      const answers: ResolvedAddress[][] = [[{ address: '127.0.0.1', family: 4 }]];
      const asked: string[] = [];
      const resolve = async (host: string) => {
        asked.push(host);
        return answers.shift() ?? [{ address: '127.0.0.2', family: 4 as const }];
      };
      hits.length = 0;
      const fetched = await safeFetch(`http://rebind.test:${port}/page.html`, {
        timeoutMs: 3000,
        maxBytes: 10_000,
        allowHttpHosts: ['rebind.test'],
        allowPrivateHosts: ['rebind.test'],
        resolve,
      });
      expect(fetched.body.toString()).toContain('Secret platypus numbers.');
      expect(asked).toEqual(['rebind.test']);
      expect(hits).toEqual([`rebind.test:${port}/page.html`]);
      expect(decoyHits).toEqual([]);
    } finally {
      await close(decoy);
    }
  });

  it('refuses a host when any address it resolves to is blocked, whatever the others are', async () => {
    const resolve = async () => [
      { address: '93.184.215.14', family: 4 as const },
      { address: 'fd00:ec2::254', family: 6 as const },
    ];
    const refused = await safeFetch('https://mixed.test/', { timeoutMs: 3000, maxBytes: 1000, resolve, allowPrivateHosts: ['mixed.test'] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SafeFetchRefused);
    expect(refused).toMatchObject({ rule: 'address', message: 'mixed.test resolves to fd00:ec2::254, a cloud metadata address', blocked: { range: 'cloud metadata', exemptable: false } });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

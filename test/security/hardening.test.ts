/**
 * Issue 15 items 5–7: what a hostile client could do to one instance before — a GraphQL alias bomb, no
 * per-IP limit off the chat route, thousands of idle sockets, Node's own error bodies, WebSockets that kept
 * a stopping process alive — and what answers it now. Real PostgreSQL and Redis.
 */
import { connect, type Socket } from 'node:net';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorEnvelope } from '../../server/http/guards.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;

beforeAll(async () => {
  mode = await realMode();
  app = await startApp(mode.config, {
    config: {
      rateLimits: { ipPerMinute: 40 },
      server: { maxWebSocketsPerIp: 3, maxSubscriptionsPerAccount: 2, },
    },
  });
});
afterAll(async () => {
  await app?.close();
  await mode?.cleanup();
});

const post = (query: string) => fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });

/** Sends raw bytes on a fresh socket and returns everything the server answered before closing. */
function raw(bytes: string, keepOpen = false, target: TestApp = app): Promise<{ text: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(target.url).port), '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, socket }));
    socket.on('connect', () => {
      if (bytes) socket.write(bytes);
      if (keepOpen) setTimeout(() => resolve({ text, socket }), 200);
    });
  });
}

function envelopeOf(text: string): { code: string; status: number } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { code: string };
  return { code: body.code, status };
}

describe('GraphQL documents are bounded', () => {
  it('an alias bomb is refused at once, and the instance stays responsive', async () => {
    const bomb = `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: plans { id }`).join(' ')} }`;
    const started = performance.now();
    const [response, health] = await Promise.all([post(bomb), fetch(`${app.url}/healthz`)]);
    const body = (await response.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
    expect(body.data ?? null).toBeNull();
    expect(body.errors[0]!.extensions.code).toBe('invalid_request');
    expect(health.status).toBe(200);
    // Refused by the token limit before any resolver ran (it answered: nothing was computed 10,000 times).
    expect(JSON.stringify(body).length).toBeLessThan(2000);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('16 aliases or a deep query are refused with a message that says which limit', async () => {
    const aliases = await post(`{ ${Array.from({ length: 16 }, (_, i) => `a${i}: plans { id }`).join(' ')} }`);
    expect(((await aliases.json()) as { errors: { message: string }[] }).errors[0]!.message).toMatch(/Aliases limit of 15/);
    const deep = await post('{ me { id } plans { packages { pools { limit { amount } } } } ' + '}');
    expect(((await deep.json()) as { errors?: unknown }).errors).toBeUndefined();
  });
});

describe('the per-IP limit is on every route', () => {
  it('GET /api/membership/plans past ipPerMinute answers 429 with Retry-After', async () => {
    const answers = await Promise.all(Array.from({ length: 60 }, () => fetch(`${app.url}/api/membership/plans`).then((r) => r.status)));
    expect(answers.filter((status) => status === 200).length).toBeLessThanOrEqual(40);
    const limited = await fetch(`${app.url}/api/membership/plans`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { code: string }).code).toBe('rate_limited');
    // Health checks are never limited.
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });
});

describe('connections', () => {
  it('past the per-address cap a new connection gets a 503 envelope and is closed', async () => {
    const capped = await startApp(mode.config, { config: { server: { maxConnectionsPerIp: 6 } } });
    try {
      const idle = await Promise.all(Array.from({ length: 6 }, () => raw('', true, capped)));
      const refused = await raw('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n', false, capped);
      expect(envelopeOf(refused.text)).toEqual({ code: 'service_unavailable', status: 503 });
      for (const { socket } of idle) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await raw('GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', false, capped)).text).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      await capped.close();
    }
  });

  it("Node's own refusals use the envelope: malformed (400), header overflow (431)", async () => {
    expect(envelopeOf((await raw('NOT HTTP AT ALL\r\n\r\n')).text)).toEqual({ code: 'invalid_request', status: 400 });
    expect(envelopeOf((await raw(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`)).text)).toEqual({ code: 'headers_too_large', status: 431 });
  });

  it('a client too slow with its headers gets a 408 envelope (Node checks every 30 s; here the handler directly)', async () => {
    const { text } = await new Promise<{ text: string }>((resolve) => {
      let written = '';
      const socket = { destroyed: false, writableEnded: false, writable: true, end: (data: string) => resolve({ text: (written += data) }), destroy: () => undefined };
      clientErrorEnvelope(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket as unknown as Socket);
    });
    expect(envelopeOf(text)).toEqual({ code: 'request_timeout', status: 408 });
  });

  it('an upgrade request on any other path gets a 404 envelope', async () => {
    const answer = await raw('GET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    expect(envelopeOf(answer.text)).toEqual({ code: 'not_found', status: 404 });
  });
});

describe('WebSockets', () => {
  it('caps sockets per address and live subscriptions per account', async () => {
    const member = await seed(app).member();
    const key = await member.key();
    const sockets: WebSocket[] = [];
    for (let i = 0; i < 3; i++) {
      const ws = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      sockets.push(ws);
    }
    const fourth = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const status = await new Promise<number>((resolve) => fourth.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)).once('open', () => resolve(101)));
    expect(status).toBe(503);
    for (const ws of sockets) ws.close();
    await new Promise((resolve) => setTimeout(resolve, 200));

    const client = createClient({ url: `${app.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${key}` } });
    const query = 'subscription { usageUpdated { packageId } }';
    const first = client.iterate({ query })[Symbol.asyncIterator]();
    const second = client.iterate({ query })[Symbol.asyncIterator]();
    await Promise.all([first.next(), second.next()]);
    const third = await client.iterate({ query })[Symbol.asyncIterator]().next().catch((error: unknown) => ({ value: { errors: error } }));
    expect(JSON.stringify(third.value)).toContain('rate_limited');
    await first.return?.();
    // One completed (the server hears it a moment later): room for another.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const fourthSub = client.iterate({ query })[Symbol.asyncIterator]();
    const next = await fourthSub.next();
    expect(JSON.stringify(next.value)).toContain('packageId');
    await fourthSub.return?.();
    await second.return?.();
    await client.dispose();
  });

  it('close() tells open sockets the server is going away (1001) and finishes at once', async () => {
    const own = await startApp(mode.config);
    const member = await seed(own).member();
    const key = await member.key();
    let code = 0;
    const client = createClient({
      url: `${own.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${key}` },
      on: { closed: (event) => (code = (event as { code: number }).code) },
    });
    const events = client.iterate({ query: 'subscription { usageUpdated { packageId } }' })[Symbol.asyncIterator]();
    await events.next();
    const started = performance.now();
    await own.close();
    expect(performance.now() - started).toBeLessThan(5000);
    await expect.poll(() => code).toBe(1001);
    await client.dispose();
  });
});

describe('introspection and suggestions in production', () => {
  it('introspection only for signed-in staff; no field suggestions', async () => {
    const production = await startApp(mode.config, { config: { server: { production: true } } });
    try {
      const introspect = '{ __schema { queryType { name } } }';
      const anonymous = (await (await fetch(`${production.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: introspect }) })).json()) as { errors?: { message: string }[] };
      expect(anonymous.errors?.[0]?.message).toMatch(/introspection has been disabled/);
      const member = await seed(production).member();
      expect((await member.web.graphql(introspect)).errors?.[0]?.message).toMatch(/introspection has been disabled/);
      const staff = await seed(production).staff('support');
      expect((await staff.web.graphql<{ __schema: { queryType: { name: string } } }>(introspect)).data?.__schema.queryType.name).toBe('Query');
      const typo = (await member.web.graphql('{ plan { id } }')).errors?.[0]?.message ?? '';
      expect(typo).not.toMatch(/Did you mean/);
    } finally {
      await production.close();
    }
    // Suggestions help only where the operator turns them on (test/security/graphql-defaults.test.ts).
    const development = await startApp(mode.config, { config: { graphql: { suggestions: true } } });
    try {
      const answer = (await (await fetch(`${development.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ plan { id } }' }) })).json()) as { errors: { message: string }[] };
      expect(answer.errors[0]!.message).toMatch(/Did you mean "plans"/);
    } finally {
      await development.close();
    }
  });
});

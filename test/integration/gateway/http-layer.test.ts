/**
 * The chat route's HTTP layer: the same envelope as every other route for bad bodies (415, 413 announced or
 * streamed, 400 invalid_json, poisoned keys, no body), request ids, the rate-limit headers, metrics and the
 * one log line; the path with a query string or trailing slash, and other methods (405).
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;
const logLines: string[] = [];

beforeAll(async () => {
  h = await startHarness({ logLines, config: { server: { bodyLimitBytes: 4096 } } });
  m = await h.member();
});
afterAll(() => h?.close());

const chat = { model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'Say hello.' }] };

function post(body: string | undefined, headers: Record<string, string> = {}, path = '/v1/chat/completions') {
  return fetch(`${h.app.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

async function expectEnvelope(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response.headers.get('x-svc-error-code')).toBe(code);
  expect(response.headers.get('x-svc-request-id')).toMatch(/^mbr_[A-Za-z0-9_-]{26}$/);
  expect(response.headers.get('x-request-id')).toBe(response.headers.get('x-svc-request-id'));
  const text = await response.text();
  // Its length said, as Fastify's error replies say it, not chunked.
  expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
  const body = JSON.parse(text) as { ok: boolean; code: string; requestId: string; stage: string; message: string; error: { code: string } };
  expect(body).toMatchObject({ ok: false, code, requestId: response.headers.get('x-svc-request-id'), error: { code } });
  return body;
}

describe('bad bodies on the chat route get the envelope and reach nobody', () => {
  it('malformed JSON → 400 invalid_json naming the problem', async () => {
    const body = await expectEnvelope(await post('{"model": "auto",'), 400, 'invalid_json');
    expect(body.stage).toBe('validation');
    expect(body.message).toMatch(/^The request body is not valid JSON: /);
  });

  it('empty body with a JSON content type → 400 invalid_json', async () => {
    await expectEnvelope(await post(''), 400, 'invalid_json');
  });

  it('a __proto__ key → 400 invalid_json, as on every other route', async () => {
    await expectEnvelope(await post('{"model":"auto","__proto__":{"admin":true},"messages":[]}'), 400, 'invalid_json');
  });

  it('wrong or missing content type → 415', async () => {
    await expectEnvelope(await post(JSON.stringify(chat), { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
    const bare = await fetch(`${h.app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${m.key}` }, body: new Uint8Array(Buffer.from(JSON.stringify(chat))) });
    await expectEnvelope(bare, 415, 'unsupported_media_type');
  });

  it('body over the limit → 413, whether announced by content-length or streamed in chunks', async () => {
    const big = JSON.stringify({ ...chat, messages: [{ role: 'user', content: 'x'.repeat(8192) }] });
    await expectEnvelope(await post(big), 413, 'payload_too_large');
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode(big.slice(i * 2500, (i + 1) * 2500)));
        controller.close();
      },
    });
    const response = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    await expectEnvelope(response, 413, 'payload_too_large');
  });

  it('no body at all → 400 invalid_request from validation', async () => {
    const response = await fetch(`${h.app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${m.key}` } });
    await expectEnvelope(response, 400, 'invalid_request');
  });

  it('none of them reached the upstream or wrote a ledger row', async () => {
    expect(h.upstream.stats.requests).toBe(0);
    expect(await ledgerRows(h.database, m.accountId, 1, 200)).toEqual([]);
  });
});

describe('the route is an ordinary citizen', () => {
  it('keeps a well-formed client request id for tracing, but keys the ledger row by an id of its own', async () => {
    const id = 'mbr_ChatPathClientId_0000001';
    const response = await post(JSON.stringify(chat), { 'x-svc-request-id': id });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-svc-request-id')).toBe(id);
    expect(response.headers.get('x-request-id')).toBe(id);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    // One body with its length, not a chunked one.
    expect(response.headers.get('transfer-encoding')).toBeNull();
    const text = await response.text();
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect((JSON.parse(text) as { object: string }).object).toBe('chat.completion');
    const [row] = await ledgerRows(h.database, m.accountId);
    expect(row!.client_request_id).toBe(id);
    expect(row!.request_id).toMatch(/^mbr_[A-Za-z0-9_-]{26}$/);
    expect(row!.request_id).not.toBe(id);
  });

  it('streams with each header once, through the lane and through Fastify', async () => {
    const id = 'mbr_ChatPathStreamHead_000001';
    for (const path of ['/v1/chat/completions', '/v1/chat/completions?trace=1']) {
      // node:http keeps every header line apart (fetch would join repeats with a comma).
      const { status, rawHeaders, text } = await new Promise<{ status: number; rawHeaders: string[]; text: string }>((resolve, reject) => {
        const request = httpRequest(`${h.app.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json', 'x-svc-request-id': id },
        });
        request.on('response', (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (part: string) => (body += part));
          response.on('end', () => resolve({ status: response.statusCode!, rawHeaders: response.rawHeaders, text: body }));
        });
        request.on('error', reject);
        request.end(JSON.stringify({ ...chat, stream: true }));
      });
      expect(status, path).toBe(200);
      const names = rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
      expect(names.filter((name, i) => names.indexOf(name) !== i), path).toEqual([]);
      const header = (name: string) => rawHeaders[names.indexOf(name) * 2 + 1];
      expect(header('content-type'), path).toBe('text/event-stream; charset=utf-8');
      expect(header('x-svc-request-id'), path).toBe(id);
      expect(header('x-request-id'), path).toBe(id);
      expect(header('x-ratelimit-limit'), path).toMatch(/^\d+$/);
      expect(header('server-timing'), path).toMatch(/^auth;dur=/);
      expect(text.endsWith('data: [DONE]\n\n'), path).toBe(true);
    }
  });

  it('is counted in /metrics and logged once, with its request id and no credential', async () => {
    const id = 'mbr_ChatPathLogProbe_00000001';
    expect((await post(JSON.stringify(chat), { 'x-svc-request-id': id })).status).toBe(200);
    await expect.poll(() => logLines.filter((line) => line.includes(id)).length).toBeGreaterThanOrEqual(1);
    const mine = logLines.filter((line) => line.includes(id)).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ msg: 'request completed', requestId: id, req: { method: 'POST', url: '/v1/chat/completions' }, res: { statusCode: 200 } });
    expect(logLines.join('\n')).not.toContain(m.key);
    const metrics = await (await fetch(`${h.app.url}/metrics`)).text();
    expect(metrics).toMatch(/svc_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} [1-9]\d*/);
    expect(metrics).toMatch(/svc_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="400"\} [1-9]\d*/);
  });

  it('answers the same path through Fastify with a query string or a trailing slash', async () => {
    for (const path of ['/v1/chat/completions?trace=1', '/v1/chat/completions/']) {
      const response = await post(JSON.stringify(chat), {}, path);
      expect(response.status, path).toBe(200);
      expect(((await response.json()) as { object: string }).object).toBe('chat.completion');
      await expectEnvelope(await post('{', {}, path), 400, 'invalid_json');
    }
  });

  it('sends the upstream the same body through the lane (spliced from the client bytes) as through Fastify (serialised)', async () => {
    const texts = [
      JSON.stringify(chat),
      `{\n  "messages": [{"role": "user", "content": "你好 \\"model\\": x"}],\n  "model" : "svc-2.1-fast",\n  "max_tokens": 7\n}\n`,
      JSON.stringify({ ...chat, stream: true, stream_options: { include_usage: true } }),
      JSON.stringify({ ...chat, stream: true }),
      JSON.stringify({ ...chat, metadata: { model: 'svc-2.1-fast' }, max_completion_tokens: 9 }),
    ];
    for (const text of texts) {
      const bodies = [];
      for (const path of ['/v1/chat/completions', '/v1/chat/completions?via=fastify']) {
        const response = await post(text, {}, path);
        expect(response.status, path).toBe(200);
        await response.text();
        bodies.push(h.upstream.bodies.at(-1));
      }
      expect(bodies[0], text).toStrictEqual(bodies[1]);
    }
  });

  it('other methods get 405 with Allow: POST', async () => {
    const response = await fetch(`${h.app.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${m.key}` } });
    expect(response.headers.get('allow')).toBe('POST');
    await expectEnvelope(response, 405, 'method_not_allowed');
  });
});

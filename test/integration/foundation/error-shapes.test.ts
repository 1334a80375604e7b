/**
 * Issue 46 item 13: which routes answer errors in which shape, as the README states it. Each surface speaks
 * what its clients parse: the envelope on `/v1`, `/api/membership` and the REST media routes; RFC 6749
 * `{error, error_description}` on `POST /oauth/token` and `POST /oauth/device_authorization`; GraphQL's
 * `errors[]` with `extensions.code` on `/graphql`; JSON-RPC errors inside MCP (`POST /v1/mcp`); Anthropic's
 * `{type: "error", error: {type, message}}` on the Anthropic Messages API (`/v1/messages`, and `/v1/models`
 * asked with `anthropic-version`), with svc's code in `x-svc-error-code`. A request
 * refused before GraphQL or MCP runs (a bad bearer, a foreign Origin, a body that is not JSON) gets the
 * envelope there too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;

beforeAll(async () => {
  mode = await realMode();
  app = await startApp(mode.config);
});
afterAll(async () => {
  await app?.close();
  await mode?.cleanup();
});

const envelopeKeys = ['actions', 'code', 'debug', 'error', 'message', 'messageZh', 'ok', 'requestId', 'stage'];

async function expectEnvelope(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(expect.arrayContaining(envelopeKeys));
  expect(body).toMatchObject({ ok: false, code, error: { code }, requestId: response.headers.get('x-svc-request-id') });
  expect(response.headers.get('x-svc-error-code')).toBe(code);
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const form = (body: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });

describe('error shapes by route', () => {
  it('the envelope: /v1, /api/membership (and /api/membership/v1), REST media', async () => {
    await expectEnvelope(await fetch(`${app.url}/v1/models`), 401, 'sign_in_required');
    await expectEnvelope(await fetch(`${app.url}/api/membership/auth/api-keys`), 401, 'sign_in_required');
    await expectEnvelope(await fetch(`${app.url}/api/membership/v1/auth/api-keys`), 401, 'sign_in_required');
    await expectEnvelope(await fetch(`${app.url}/v1/audio/speech`, json({ model: 'svc-tts', input: 'hi' })), 401, 'sign_in_required');
    await expectEnvelope(await fetch(`${app.url}/v1/media/${'A'.repeat(22)}.png`), 404, 'not_found');
  });

  it("Anthropic's shape on /v1/messages, and on /v1/models asked with anthropic-version; svc's code in the headers", async () => {
    const refused = await fetch(`${app.url}/v1/messages`, json({ model: 'svc-2.1', max_tokens: 1, messages: [] }, { 'x-api-key': 'svc_live_nope' }));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-svc-error-code')).toBe('sign_in_required');
    expect(await refused.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) }, request_id: refused.headers.get('x-svc-request-id') });
    const models = await fetch(`${app.url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(models.status).toBe(401);
    expect(await models.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('RFC 6749 §5.2 on POST /oauth/token and POST /oauth/device_authorization, and nothing else in the body', async () => {
    for (const [path, body, error] of [
      ['/oauth/token', { grant_type: 'password' }, 'unsupported_grant_type'],
      ['/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'nope' }, 'invalid_grant'],
      ['/oauth/device_authorization', {}, 'invalid_request'],
    ] as const) {
      const response = await fetch(`${app.url}${path}`, form(body));
      expect(response.status, path).toBe(400);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json(), path).toEqual({ error, error_description: expect.any(String) });
    }
  });

  it('GraphQL errors[] with extensions.code on /graphql; the envelope when refused before GraphQL runs', async () => {
    const answer = await fetch(`${app.url}/graphql`, json({ query: 'mutation { createApiKey(name: "x") { token } }' }));
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { errors: { message: string; extensions: { code: string; requestId: string } }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'sign_in_required', requestId: answer.headers.get('x-svc-request-id') });
    await expectEnvelope(await fetch(`${app.url}/graphql`, json({ query: '{ me { id } }' }, { authorization: 'Bearer svc_live_nope' })), 401, 'sign_in_required');
  });

  it('JSON-RPC errors inside MCP (POST /v1/mcp); the envelope when refused before MCP runs', async () => {
    const key = await (await seed(app).member()).key('mcp');
    const call = (body: unknown, headers: Record<string, string>) => fetch(`${app.url}/v1/mcp`, json(body, { accept: 'application/json, text/event-stream', ...headers }));
    const unknown = await call({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } }, { authorization: `Bearer ${key}` });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: expect.any(String) } });
    await expectEnvelope(await call({ jsonrpc: '2.0', id: 8, method: 'tools/list' }, {}), 401, 'sign_in_required');
    const notJson = await fetch(`${app.url}/v1/mcp`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":' });
    await expectEnvelope(notJson, 400, 'invalid_json');
  });
});

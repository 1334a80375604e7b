/**
 * Every error the foundation produces carries the spec's exact envelope and headers (spec §7,
 * DESIGN §5), in both modes: real PostgreSQL + Redis, and embedded PGlite + in-process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedMode, realMode, startApp, type TestApp } from '../../helpers/app.ts';

const ENVELOPE_KEYS = ['ok', 'requestId', 'error', 'message', 'messageZh', 'code', 'stage', 'actions', 'debug'];

async function expectEnvelope(response: Response, status: number, code: string, stage: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as Record<string, any>;
  for (const key of ENVELOPE_KEYS) expect(body).toHaveProperty(key);
  expect(body.ok).toBe(false);
  expect(body.requestId).toMatch(/^mbr_[A-Za-z0-9_-]{26}$/);
  expect(body.code).toBe(code);
  expect(body.error).toEqual({ message: body.message, type: expect.any(String), code, param: body.error.param ?? null });
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(5);
  expect(typeof body.messageZh).toBe('string');
  expect(body.stage).toBe(stage);
  expect(Array.isArray(body.actions)).toBe(true);
  expect(body.debug).toEqual({
    productModel: null,
    upstreamStatus: null,
    upstreamHost: null,
    quotaRefunded: false,
    latencyMs: expect.any(Number),
  });
  expect(response.headers.get('x-svc-request-id')).toBe(body.requestId);
  expect(response.headers.get('x-request-id')).toBe(body.requestId);
  expect(response.headers.get('x-svc-error-code')).toBe(code);
  expect(response.headers.get('x-svc-error-stage')).toBe(stage);
  return body;
}

for (const mode of ['real', 'embedded'] as const) {
  describe(`error envelope (${mode})`, () => {
    let testApp: TestApp;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      const setup = mode === 'real' ? await realMode() : embeddedMode();
      cleanup = setup.cleanup;
      testApp = await startApp(setup.config, {
        config: { server: { bodyLimitBytes: 4096 } },
        beforeListen: (app) => {
          // A route that fails the way a bug would, to prove the 500 path hides internals.
          app.get('/api/membership/test-explodes', async () => {
            throw new Error('secret internal detail at /srv/svc/db.ts:42');
          });
          app.post('/api/membership/test-echo', async (request) => ({ ok: true, body: request.body }));
        },
      });
    });
    afterAll(async () => {
      await testApp?.close();
      await cleanup?.();
    });

    it('unknown route → 404 not_found', async () => {
      const body = await expectEnvelope(await fetch(`${testApp.url}/api/membership/nope`), 404, 'not_found', 'routing');
      expect(body.message).toContain('/api/membership/nope');
    });

    it('unknown /v1 route → 404 not_found', async () => {
      await expectEnvelope(await fetch(`${testApp.url}/v1/does-not-exist`, { method: 'POST' }), 404, 'not_found', 'routing');
    });

    it('client errors say a retry cannot help; the SDKs would otherwise retry some of them', async () => {
      const notFound = await fetch(`${testApp.url}/api/membership/nope`);
      expect(notFound.headers.get('x-should-retry')).toBe('false');
      const broken = await fetch(`${testApp.url}/api/membership/test-explodes`);
      expect(broken.status).toBe(500);
      expect(broken.headers.get('x-should-retry')).toBeNull();
    });

    it('wrong method → 405 with Allow', async () => {
      const response = await fetch(`${testApp.url}/api/membership/plans`, { method: 'DELETE' });
      expect(response.headers.get('allow')).toBe('GET');
      await expectEnvelope(response, 405, 'method_not_allowed', 'routing');
    });

    it('malformed JSON → 400 invalid_json', async () => {
      const response = await fetch(`${testApp.url}/api/membership/test-echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"model": "auto",',
      });
      const body = await expectEnvelope(response, 400, 'invalid_json', 'validation');
      expect(body.error.type).toBe('invalid_request_error');
    });

    it('empty JSON body → 400 invalid_json', async () => {
      const response = await fetch(`${testApp.url}/api/membership/test-echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '',
      });
      await expectEnvelope(response, 400, 'invalid_json', 'validation');
    });

    it('body over the limit → 413 payload_too_large', async () => {
      const response = await fetch(`${testApp.url}/api/membership/test-echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'x'.repeat(8192) }),
      });
      await expectEnvelope(response, 413, 'payload_too_large', 'validation');
    });

    it('wrong content type → 415 unsupported_media_type', async () => {
      for (const contentType of ['text/plain', 'application/xml']) {
        const response = await fetch(`${testApp.url}/api/membership/test-echo`, {
          method: 'POST',
          headers: { 'content-type': contentType },
          body: '{"a":1}',
        });
        await expectEnvelope(response, 415, 'unsupported_media_type', 'validation');
      }
    });

    it('unexpected exception → 500 internal_error without internals', async () => {
      const response = await fetch(`${testApp.url}/api/membership/test-explodes`);
      const body = await expectEnvelope(response, 500, 'internal_error', 'internal');
      const text = JSON.stringify(body);
      expect(text).not.toContain('secret internal detail');
      expect(text).not.toContain('/srv/');
      expect(text).not.toMatch(/at .*\.ts:\d+/);
    });

    it('a well-formed client request id round-trips; a malformed one is replaced', async () => {
      const id = 'mbr_ClientChosenTraceId_0123456';
      const kept = await fetch(`${testApp.url}/api/membership/nope`, { headers: { 'x-svc-request-id': id } });
      expect(kept.headers.get('x-svc-request-id')).toBe(id);
      expect(kept.headers.get('x-request-id')).toBe(id);
      expect(((await kept.json()) as { requestId: string }).requestId).toBe(id);

      const ok = await fetch(`${testApp.url}/api/membership/plans`, { headers: { 'x-svc-request-id': id } });
      expect(ok.headers.get('x-svc-request-id')).toBe(id);

      for (const bad of ['not-ours', 'mbr_', 'mbr_has spaces in it', `mbr_${'x'.repeat(200)}`]) {
        const replaced = await fetch(`${testApp.url}/api/membership/plans`, { headers: { 'x-svc-request-id': bad } });
        expect(replaced.headers.get('x-svc-request-id')).toMatch(/^mbr_[A-Za-z0-9_-]{26}$/);
      }
    });

    it('successful JSON POST still works (the error paths are not the only path)', async () => {
      const response = await fetch(`${testApp.url}/api/membership/test-echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ hello: 'world' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ ok: true, body: { hello: 'world' } });
    });
  });
}

/**
 * The HTTP details clients and browsers rely on: CORS for /v1 (bearer only, never credentials, preflight
 * answered without the pipeline), rate-limit headers under OpenAI's names too, the spec's
 * /api/membership/v1 prefix, the web app's not-found page for a browser, and a 402 that says what the
 * worst case is and how to lower it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { createMember, startHarness, type Harness, type Member } from './harness.ts';

const webDir = mkdtempSync(join(tmpdir(), 'svc-web-'));
writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>svc</title><div id="root"></div>');

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness({ config: { web: { distDir: webDir } } });
  m = await h.member();
});
afterAll(() => h?.close());

const chat = { model: 'auto', messages: [{ role: 'user', content: 'hi' }] };

function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${h.app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

describe('CORS for /v1', () => {
  it('any origin may call with a bearer key; credentials are never allowed; our headers are readable', async () => {
    const reply = await post('/v1/chat/completions', m.key, chat, { origin: 'https://tool.example' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    expect(reply.headers.get('access-control-allow-credentials')).toBeNull();
    expect(reply.headers.get('access-control-expose-headers')).toContain('x-request-id');
    expect(reply.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining-requests');
    // Errors (here a 401) are readable too, and a streamed reply keeps the headers.
    const denied = await post('/v1/chat/completions', 'svc_live_nope', chat, { origin: 'https://tool.example' });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe('*');
    const streamed = await post('/v1/chat/completions', m.key, { ...chat, stream: true }, { origin: 'https://tool.example' });
    expect(streamed.headers.get('access-control-allow-origin')).toBe('*');
    await streamed.text();
    const models = await fetch(`${h.app.url}/v1/models`, { headers: { authorization: `Bearer ${m.key}`, origin: 'https://tool.example' } });
    expect(models.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers a preflight with 204 and never reaches the pipeline', async () => {
    const before = h.upstream.stats.requests;
    const preflight = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://tool.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-stainless-os');
    expect(Number(preflight.headers.get('access-control-max-age'))).toBe(7200);
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    expect(h.upstream.stats.requests).toBe(before);
    // Odd requested headers are not echoed back.
    const odd = await fetch(`${h.app.url}/v1/responses`, { method: 'OPTIONS', headers: { origin: 'https://tool.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-a, <b>' } });
    expect(odd.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
  });

  it('a configured origin list allows those origins only, and says the reply varies by origin', async () => {
    const app = await startApp(h.mode.config, { config: { gateway: { cors: { origins: ['https://app.example.com'] } } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
    try {
      const member = await createMember(app);
      const send = (origin: string) =>
        fetch(`${app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json', origin }, body: JSON.stringify(chat) });
      const allowed = await send('https://app.example.com');
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(allowed.headers.get('vary')).toContain('origin');
      const other = await send('https://evil.example');
      expect(other.status).toBe(200);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const preflight = await fetch(`${app.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(preflight.headers.get('access-control-allow-methods')).toBeNull();
    } finally {
      await app.close();
    }
  });

  it('membership routes get no CORS headers (they use the cookie)', async () => {
    const reply = await fetch(`${h.app.url}/api/membership/plans`, { headers: { origin: 'https://tool.example' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('headers and paths', () => {
  it('rate-limit headers come under OpenAI names too', async () => {
    const reply = await post('/v1/chat/completions', m.key, chat);
    expect(reply.headers.get('x-ratelimit-limit-requests')).toBe(reply.headers.get('x-ratelimit-limit'));
    expect(reply.headers.get('x-ratelimit-remaining-requests')).toBe(reply.headers.get('x-ratelimit-remaining'));
    expect(reply.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+ms|\d+(\.\d+)?s|\d+m\d+(\.\d+)?s)$/);
  });

  it('/api/membership/v1/… answers as /api/membership/…', async () => {
    const plain = await fetch(`${h.app.url}/api/membership/plans`);
    const versioned = await fetch(`${h.app.url}/api/membership/v1/plans?x=1`);
    expect(versioned.status).toBe(200);
    expect(await versioned.json()).toEqual(await plain.json());
    const usage = await fetch(`${h.app.url}/api/membership/v1/usage`, { headers: { authorization: `Bearer ${m.key}` } });
    expect(usage.status).toBe(200);
    const missing = await fetch(`${h.app.url}/api/membership/v1/nothing-here`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('not_found');
    expect((await fetch(`${h.app.url}/api/membership/v1x/plans`)).status).toBe(404);
  });

  it('a browser opening an unknown page gets the web app (404, HTML); API clients keep the envelope', async () => {
    const browser = await fetch(`${h.app.url}/no/such/page`, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(browser.status).toBe(404);
    expect(browser.headers.get('content-type')).toContain('text/html');
    expect(await browser.text()).toContain('<div id="root">');
    const api = await fetch(`${h.app.url}/no/such/page`);
    expect(api.status).toBe(404);
    expect(((await api.json()) as { code: string }).code).toBe('not_found');
    const apiPath = await fetch(`${h.app.url}/v1/nothing`, { headers: { accept: 'text/html' } });
    expect(apiPath.headers.get('content-type')).toContain('application/json');
    const posted = await fetch(`${h.app.url}/no/such/page`, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/json' }, body: '{}' });
    expect(posted.headers.get('content-type')).toContain('application/json');
  });
});

describe('model names', () => {
  it('a reply for auto names the model that answered; the ledger keeps both, and the history shows both', async () => {
    const member = await h.member();
    const completion = await member.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.model).toBe('svc-2.1-fast');
    let history: { nodes: { model: string; routedModel: string; requestId: string }[] } = { nodes: [] };
    for (let i = 0; i < 40 && history.nodes.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      history = (await (await fetch(`${h.app.url}/api/membership/usage/history`, { headers: { authorization: `Bearer ${member.key}` } })).json()) as typeof history;
    }
    expect(history.nodes[0]).toMatchObject({ model: 'auto', routedModel: completion.model, requestId: completion._request_id });
  });
});

describe('402 for the worst case', () => {
  let app: TestApp;
  beforeAll(async () => {
    // A day pool of 0.0005 USD: a small request fits; one with max_tokens 8000 could cost 0.000672 + its prompt.
    const plans = { ...defaultPlans, free: { ...defaultPlans.free, requestsPerMinute: 1000, pools: { ...defaultPlans.free.pools, fast: { day: 0.0005, week: 1, month: 4 } } } };
    app = await startApp(h.mode.config, { config: { plans, rateLimits: { ipPerMinute: 100_000 } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
  });
  afterAll(() => app?.close());

  it('says what the request could cost, why, and how to lower it, with amounts to the micro-unit', async () => {
    const member = await createMember(app);
    const big = await fetch(`${app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...chat, max_tokens: 8000 }),
    });
    expect(big.status).toBe(402);
    const body = (await big.json()) as { message: string; quota: { requestMaxCost: { amount: string } } };
    expect(body.message).toContain('has 0.0005 USD left');
    expect(body.message).toMatch(/could cost up to 0\.000\d+ USD because max_tokens is 8000/);
    expect(body.message).toContain('lower max_tokens');
    expect(body.message).toMatch(/or wait until \d{4}-\d\d-\d\dT00:00:00\.000Z/);
    expect(body.message).toContain('none of 0.0005 USD used yet');
    expect(body.quota.requestMaxCost.amount).toMatch(/^0\.000\d+$/);
    const responses = await fetch(`${app.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', input: 'hi', max_output_tokens: 8000 }),
    });
    expect(responses.status).toBe(402);
    expect(((await responses.json()) as { message: string }).message).toContain('because max_output_tokens is 8000');
    const small = await fetch(`${app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...chat, max_tokens: 100 }),
    });
    expect(small.status).toBe(200);
  });
});

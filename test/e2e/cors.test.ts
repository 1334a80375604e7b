/**
 * A web app on another origin calls svc's `/v1/chat/completions` from Chromium with an API key and streams
 * the reply as it arrives (CORS: the preflight, then the streamed POST; our headers readable). The same
 * page cannot make the browser send its cookies along: `/v1` never allows credentials.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';
import { launchChromium, openPage } from './identity-browser.ts';

let svc: TestApp;
let upstream: ScriptedUpstream;
let cleanup: () => Promise<void>;
let browser: Browser;
let site: Server;
let siteUrl: string;
const preflights: string[] = [];

/** The other origin's page: it streams a chat reply from svc into the document, chunk by chunk. */
const page = `<!doctype html><meta charset="utf-8"><title>Another app</title>
<pre id="reply"></pre>
<script>
window.chat = async (base, key, credentials) => {
  const response = await fetch(base + '/v1/chat/completions', {
    method: 'POST',
    credentials,
    headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'auto', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: '#script {"chunks":6,"chunkText":"word ","intervalMs":60}' }] }),
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const arrivals = [];
  let buffer = '';
  let usage = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const events = buffer.split('\\n\\n');
    buffer = events.pop();
    for (const event of events) {
      if (event === 'data: [DONE]') continue;
      const chunk = JSON.parse(event.slice(6));
      if (chunk.usage) usage = chunk.usage;
      const text = chunk.choices[0]?.delta?.content;
      if (text) {
        document.getElementById('reply').textContent += text;
        arrivals.push(performance.now());
      }
    }
  }
  return { status: response.status, requestId: response.headers.get('x-request-id'), remaining: response.headers.get('x-ratelimit-remaining-requests'), arrivals, usage, text: document.getElementById('reply').textContent };
};
</script>`;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  const mode = await realMode();
  cleanup = mode.cleanup;
  svc = await startApp(mode.config, {
    env: { SVC_UPSTREAM_URL: upstream.url },
    beforeListen: (app) => {
      app.addHook('onRequest', async (request) => {
        if (request.method === 'OPTIONS') preflights.push(`${request.url} ${request.headers.origin} ${request.headers['access-control-request-headers']}`);
      });
    },
  });
  site = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(page);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://localhost:${(site.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
  await svc?.close();
  await upstream?.close();
  await cleanup?.();
});

describe('a browser app on another origin', () => {
  it('streams a chat reply from /v1 with an API key', async () => {
    const member = await seed(svc).member();
    const { key } = await member.withKey('browser app');
    const { page: tab, context, problems } = await openPage(browser, siteUrl);
    try {
      await tab.goto('/');
      expect(new URL(tab.url()).origin).not.toBe(svc.url);
      const result = await tab.evaluate(([base, apiKey]) => (window as unknown as { chat: (b: string, k: string, c: string) => Promise<unknown> }).chat(base!, apiKey!, 'omit'), [svc.url, key]);
      const { status, requestId, remaining, arrivals, usage, text } = result as { status: number; requestId: string; remaining: string; arrivals: number[]; usage: { completion_tokens: number }; text: string };
      expect(status).toBe(200);
      expect(text).toBe('word '.repeat(6));
      expect(usage.completion_tokens).toBe(6);
      // Read as it streamed: the chunks arrived over time, not in one piece at the end. The upstream spaces
      // them 60 ms apart (300 ms in all); a reply held to its end arrives within a millisecond or two, while a
      // loaded machine can bunch a streamed one (107 ms seen in CI), so more than one interval is asked.
      expect(arrivals).toHaveLength(6);
      expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(60);
      // Our headers are readable from the page (exposed), and the browser asked first (the preflight).
      expect(requestId).toMatch(/^mbr_/);
      expect(Number(remaining)).toBeGreaterThan(0);
      expect(preflights).toContain(`/v1/chat/completions ${siteUrl} authorization,content-type`);
      expect(await tab.locator('#reply').textContent()).toBe('word '.repeat(6));
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('cannot send cookies along: a credentialed request is refused by the browser', async () => {
    const { key } = await (await seed(svc).member()).withKey('browser app');
    const { page: tab, context } = await openPage(browser, siteUrl);
    try {
      await tab.goto('/');
      const outcome = await tab.evaluate(
        ([base, apiKey]) =>
          (window as unknown as { chat: (b: string, k: string, c: string) => Promise<unknown> }).chat(base!, apiKey!, 'include').then(
            () => 'allowed',
            (error: Error) => `${error.name}: ${error.message}`,
          ),
        [svc.url, key],
      );
      // The browser's CORS check fails (no access-control-allow-credentials): fetch rejects before any body.
      expect(outcome).toBe('TypeError: Failed to fetch');
    } finally {
      await context.close();
    }
  });
});

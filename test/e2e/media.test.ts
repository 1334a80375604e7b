/**
 * The media pages in Chromium against the real app and the scripted upstream: `/docs/media` with this
 * server's base URL in its examples, and `/account/usage` listing image, speech and music requests with
 * what each produced.
 */
import { resolve } from 'node:path';
import type OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir } from './identity-browser.ts';

let testApp: TestApp;
let upstream: ScriptedUpstream;
let cleanup: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  upstream = await startScriptedUpstream();
  const mode = await realMode();
  cleanup = mode.cleanup;
  testApp = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await upstream?.close();
  await cleanup?.();
});

describe('media in the web app', () => {
  it('documents images, speech and music with this server’s base URL', async () => {
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await page.goto('/docs');
      await page.getByRole('main').getByRole('link', { name: 'Images, speech and music' }).click();
      await page.waitForURL('**/docs/media');
      // The URL changes before the lazily loaded page replaces the old one: wait for its heading.
      await expect.poll(() => page.locator('h1').textContent()).toBe('Images, speech and music');
      const body = await page.locator('main').innerText();
      expect(body).toContain(`baseURL: '${testApp.url}/v1'`);
      expect(body).toContain(`curl ${testApp.url}/v1/audio/speech`);
      expect(body).toContain("model: 'svc-img'");
      expect(body).toContain('"model": "svc-music"');
      await page.screenshot({ path: resolve(resultsDir, 'docs-media.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('lists media requests on the usage page with the images and seconds they produced', async () => {
    const member = await seed(testApp).member({ planPackage: 'pro' });
    const { client } = await member.withKey();
    await client.chat.completions.create({ model: 'svc-img', messages: [{ role: 'user', content: 'two pears' }], n: 2 });
    await (await client.audio.speech.create({ model: 'svc-tts', voice: 'nova', input: 'Hello from the media test.', response_format: 'wav' })).arrayBuffer();
    await (await client.audio.speech.create({ model: 'svc-music', input: 'a jingle', duration: 4, response_format: 'wav' } as unknown as OpenAI.Audio.SpeechCreateParams)).arrayBuffer();

    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: member.web.cookie!, url: testApp.url }]);
      await page.goto('/account/usage');
      await expect.poll(() => page.locator('[data-request-id]').count(), { timeout: 10_000 }).toBe(3);
      const produced = await page.getByTestId('request-produced').allTextContents();
      // Newest first: music, speech, images.
      expect(produced[0]).toBe('4 s of audio');
      expect(produced[1]).toMatch(/^1\.\d s of audio$/);
      expect(produced[2]).toBe('2 images');
      await page.screenshot({ path: resolve(resultsDir, 'usage-media.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/**
 * `/account/alerts` in Chromium against the real app (PostgreSQL + Redis): a new member opens Alerts from
 * the header, sets a webhook (its secret shown once), sends a test and sees the answer in the deliveries
 * list; then a request crosses 80 % of their daily pool and the toast and the unread badge appear live,
 * without a reload. In Chinese too.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../server/config/catalogue.ts';
import { formatMicros } from '../../server/config/money.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir, signUpOnPage } from './identity-browser.ts';

// One request that costs exactly its reservation (it reports the most usage svc accepts): 90 % of the day pool.
const request = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'alerts e2e' }], max_tokens: 1000 };
const bytes = Buffer.byteLength(JSON.stringify(request));
const cost = Math.ceil((bytes * 42_000 + request.max_tokens * 84_000) / 1_000_000);
const dayLimit = Math.ceil(cost / 0.9);
const plans = {
  ...defaultPlans,
  free: {
    name: 'Free',
    requestsPerMinute: 100_000,
    pools: { fast: { day: formatMicros(dayLimit), week: 100, month: 100 }, premium: { day: 1, week: 5, month: 20 } },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
};

let testApp: TestApp;
let upstream: ScriptedUpstream;
let cleanup: () => Promise<void>;
let browser: Browser;
let hook: Server;
let hookUrl: string;
const received: string[] = [];

beforeAll(async () => {
  await ensureBuilt();
  upstream = await startScriptedUpstream();
  upstream.setScript(() => ({ usageOverride: { prompt_tokens: bytes, completion_tokens: request.max_tokens } }));
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((done) => hook.listen(0, '127.0.0.1', done));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/svc-alerts`;
  const mode = await realMode();
  cleanup = mode.cleanup;
  testApp = await startApp(mode.config, { config: { plans, alerts: { pollSeconds: 0.2 } }, env: { SVC_UPSTREAM_URL: upstream.url } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await upstream?.close();
  await new Promise((done) => hook?.close(done));
  await cleanup?.();
});

describe('alerts page', () => {
  it('sets a webhook, sends a test, and shows a crossing live as a toast and a badge', async () => {
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await page.goto('/account');
      await signUpOnPage(page, testApp.url, `e2e-alerts-${Date.now()}@example.com`);
      await page.getByLabel('Key name').fill('alerts page');
      await page.getByRole('button', { name: 'Create key' }).click();
      const token = (await page.getByTestId('new-key-token').textContent())!.trim();

      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
      await page.waitForURL('**/account/alerts');
      await page.getByRole('heading', { name: 'Thresholds' }).waitFor();
      await expect.poll(() => page.locator('tr[data-meter]').count()).toBe(6);
      expect(await page.getByLabel('Thresholds for Fast models, daily').inputValue()).toBe('80, 100');
      await page.getByText('Nothing sent yet.').waitFor();

      await page.getByLabel('Webhook URL').fill(hookUrl);
      await page.getByRole('button', { name: 'Save webhook' }).click();
      const secret = (await page.getByTestId('webhook-secret').textContent())!.trim();
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Send test' }).click();
      await page.getByText(/Test delivered: HTTP 200 in \d+ ms\./).waitFor();
      expect(JSON.parse(received[0]!)).toMatchObject({ type: 'alert.test' });
      await page.locator('.alert-deliveries tr[data-state="delivered"]').first().waitFor();
      expect(await page.locator('.alert-deliveries tbody').textContent()).toContain('HTTP 200');

      // A crossing, made from outside the page: the toast and the badge come live.
      await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
      const client = new OpenAI({ apiKey: token, baseURL: `${testApp.url}/v1`, maxRetries: 0 });
      await client.chat.completions.create(request);
      const toast = page.getByTestId('alert-toast');
      await toast.waitFor({ timeout: 10_000 });
      expect(await toast.textContent()).toContain('80% of a limit used');
      expect(await toast.textContent()).toContain('Fast models, daily');
      await page.locator('.notice-bell__count').filter({ hasText: '1' }).waitFor();
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
      await page.screenshot({ path: resolve(resultsDir, 'alerts-toast.png') });
      await page.reload();
      // The test, the crossing's email and its webhook.
      await expect.poll(() => page.locator('.alert-deliveries tbody tr').count(), { timeout: 10_000 }).toBe(3);
      await page.screenshot({ path: resolve(resultsDir, 'alerts-en.png'), fullPage: true });

      // The same page in Chinese.
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.evaluate(() => (document.cookie = 'svc_locale=zh-CN; Path=/'));
      await page.reload();
      await page.getByRole('heading', { name: '阈值' }).waitFor();
      await page.getByText('快速模型，每日').first().waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'alerts-zh-CN.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

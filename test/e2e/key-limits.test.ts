/**
 * The keys page in Chromium (issue 51): a member sets a key's daily and monthly budget and rpm when making
 * it, uses the key, and sees today's spend drawn against the cap; then edits the limits from the row; a
 * wrong rpm shows the server's precise message. Real PostgreSQL, Redis and a scripted upstream.
 */
import { resolve } from 'node:path';
import OpenAI from 'openai';
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
  const mode = await realMode();
  cleanup = mode.cleanup;
  upstream = await startScriptedUpstream();
  testApp = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await upstream?.close();
  await cleanup?.();
});

describe('keys page: limits', () => {
  it('sets a budget and rpm on a new key, shows spend against the cap, edits the limits', async () => {
    const member = await seed(testApp).member();
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: member.web.cookie!, url: testApp.url }]);
      await page.goto('/account');
      await page.getByText('No API keys yet.').waitFor();
      await page.getByLabel('Key name').fill('budgeted');
      await page.getByText('Limits (optional)').click();
      await page.getByLabel('Spend cap per day').fill('0.05');
      await page.getByLabel('Spend cap per month').fill('1');
      await page.getByLabel('Requests per minute').fill('20');
      await page.getByRole('button', { name: 'Create key' }).click();
      const token = (await page.getByTestId('new-key-token').textContent())!.trim();
      const row = page.getByRole('row', { name: /budgeted/ });
      await row.getByText('USD 0.00 of USD 0.05').waitFor();
      await row.getByText(/20 rpm/).waitFor();

      // Use the key, then reload: today's spend is drawn against the daily cap.
      const client = new OpenAI({ apiKey: token, baseURL: `${testApp.url}/v1`, maxRetries: 0 });
      await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 });
      const spent = await expect
        .poll(async () => {
          const listed = await member.web.graphql<{ apiKeys: { limits: { spentToday: { amountMicros: number } } }[] }>('{ apiKeys { limits { spentToday { amountMicros } } } }');
          return listed.data!.apiKeys[0]!.limits.spentToday.amountMicros;
        }, { timeout: 10_000 })
        .toBeGreaterThan(0);
      void spent;
      await page.reload();
      const meter = page.getByRole('meter', { name: "Today's spend of budgeted against its daily cap" });
      await meter.waitFor();
      expect(Number(await meter.getAttribute('aria-valuenow'))).toBeGreaterThan(0);
      expect(await meter.getAttribute('aria-valuemax')).toBe('50000');
      await page.screenshot({ path: resolve(resultsDir, 'key-limits-spend.png'), fullPage: true });

      // Edit: an rpm above the plan's is refused with the server's words; then lift the daily cap.
      await page.getByRole('row', { name: /budgeted/ }).getByRole('button', { name: 'Set limits' }).click();
      const editor = page.getByRole('form', { name: 'Limits of budgeted' });
      await editor.getByLabel('Requests per minute').fill('100000000');
      await editor.getByRole('button', { name: 'Save limits' }).click();
      await page.getByText(/above your plan's limit of \d+ requests per minute/).waitFor();
      await editor.getByLabel('Requests per minute').fill('10');
      await editor.getByLabel('Spend cap per day').fill('');
      await editor.getByRole('button', { name: 'Save limits' }).click();
      await editor.waitFor({ state: 'detached' });
      const updated = page.getByRole('row', { name: /budgeted/ });
      await updated.getByText(/10 rpm/).waitFor();
      await updated.getByText(/\(no cap\)/).waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'key-limits-edited.png'), fullPage: true });
      expect(problems.filter((problem) => !/status of 400/.test(problem))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});

/**
 * `/account/usage` in Chromium against the real app (PostgreSQL + Redis) and the scripted upstream: a new
 * member signs up, creates a key, opens the usage page, and chats with the `openai` SDK from the test; the
 * pool bar and the request's cost appear without reloading the page (graphql-ws subscription).
 */
import { resolve } from 'node:path';
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir, signUpOnPage } from './identity-browser.ts';

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

interface HistoryNode {
  requestId: string;
  estimated: boolean;
  cost: { amountMicros: number; amount: string; currency: string };
}

describe('usage page', () => {
  it('asks the signed-out to sign in', async () => {
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await page.goto('/account/usage');
      await page.getByText('Sign in to see your usage').waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'usage-signed-out.png') });
      await page.getByRole('link', { name: 'Sign in or create an account' }).click();
      await page.waitForURL('**/account');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('draws the pools and shows each request and its cost as it happens, without a reload', async () => {
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await page.goto('/account');
      await signUpOnPage(page, testApp.url, `e2e-usage-${Date.now()}@example.com`);
      await page.getByLabel('Key name').fill('usage page');
      await page.getByRole('button', { name: 'Create key' }).click();
      const token = (await page.getByTestId('new-key-token').textContent())!.trim();

      // From the header, as a member would get there.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
      await page.waitForURL('**/account/usage');
      await page.getByText('No requests yet — here is how to make your first one').waitFor();
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      const fastDay = page.locator('[data-pool="fast-day"] [role="meter"]');
      expect(await fastDay.getAttribute('aria-valuenow')).toBe('0');
      expect(await page.locator('[data-pool="fast-day"]').textContent()).toContain('UTC');
      await expect.poll(() => page.locator('[role="meter"]').count(), { timeout: 10_000 }).toBe(6);
      await page.screenshot({ path: resolve(resultsDir, 'usage-empty.png'), fullPage: true });
      // A reload would lose this.
      await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

      const client = new OpenAI({ apiKey: token, baseURL: `${testApp.url}/v1`, maxRetries: 0 });
      await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'Hello from the usage e2e test.' }] });
      const quiet = await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: '#script {"usage":"absent"}\nCount for me.' }], stream: true });
      for await (const chunk of quiet) void chunk;

      // What the ledger billed, through the REST twin of the page's query.
      let nodes: HistoryNode[] = [];
      await expect
        .poll(async () => {
          const response = await fetch(`${testApp.url}/api/membership/usage/history`, { headers: { authorization: `Bearer ${token}` } });
          nodes = ((await response.json()) as { nodes: HistoryNode[] }).nodes;
          return nodes.length;
        }, { timeout: 10_000 })
        .toBe(2);
      const total = nodes.reduce((sum, node) => sum + node.cost.amountMicros, 0);
      expect(total).toBeGreaterThan(0);

      await expect.poll(() => fastDay.getAttribute('aria-valuenow'), { timeout: 10_000 }).toBe(String(total));
      await expect.poll(() => page.locator('[data-request-id]').count(), { timeout: 10_000 }).toBe(2);
      for (const node of nodes) {
        const row = page.locator(`[data-request-id="${node.requestId}"]`);
        expect(await row.getByTestId('request-cost').textContent()).toBe(`${node.cost.currency}\u00a0${node.cost.amount}`);
        expect(await row.getByText('estimated').count()).toBe(node.estimated ? 1 : 0);
      }
      expect(await page.locator('[data-pool="fast-day"] [data-testid="pool-used"]').textContent()).not.toBe('USD\u00a00.00');
      const fill = await page.locator('[data-pool="fast-day"] .gauge__fill').boundingBox();
      expect(fill!.width).toBeGreaterThan(0);
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

      await page.screenshot({ path: resolve(resultsDir, 'usage.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

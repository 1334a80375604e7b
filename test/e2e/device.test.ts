/**
 * `/device` in Chromium: a CLI-style client starts a device login, the member opens
 * verification_uri_complete signed out, signs up on the page, sees the client name and the code, approves
 * with an explicit click, and the client's next poll receives a session token that works on /v1/models.
 */
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir, signUpOnPage } from './identity-browser.ts';

let testApp: TestApp;
let cleanup: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  const mode = await realMode();
  cleanup = mode.cleanup;
  testApp = await startApp(mode.config, { config: { auth: { devicePollIntervalSeconds: 1 } } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await cleanup?.();
});

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${testApp.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('device approval page', () => {
  it('signs in on the page, shows client and code, approves on click; the client gets its token', async () => {
    const started = await post('/api/membership/auth/device/start', { client: 'svc-cli on build-box' });
    const userCode = started.body.user_code as string;
    const complete = new URL(started.body.verification_uri_complete as string);
    expect(complete.pathname).toBe('/device');
    expect(complete.searchParams.get('user_code')).toBe(userCode);

    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await page.goto(`${complete.pathname}${complete.search}`);
      await page.getByText(`to review the code ${userCode}`).waitFor();
      await signUpOnPage(page, testApp.url, `e2e-device-${Date.now()}@example.com`);

      await page.getByTestId('device-card').waitFor();
      expect(await page.getByTestId('device-client').textContent()).toBe('svc-cli on build-box');
      expect(await page.getByTestId('device-code').textContent()).toBe(userCode);
      await page.screenshot({ path: resolve(resultsDir, 'device-review.png'), fullPage: true });

      // Nothing happens without the click.
      expect((await post('/api/membership/auth/device/poll', { device_code: started.body.device_code })).body).toMatchObject({ code: 'authorization_pending' });
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByText('Approved. You can close this page').waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'device-approved.png'), fullPage: true });

      await new Promise((r) => setTimeout(r, 1100));
      const polled = await post('/api/membership/auth/device/poll', { device_code: started.body.device_code });
      expect(polled.status).toBe(200);
      const models = await fetch(`${testApp.url}/v1/models`, { headers: { authorization: `Bearer ${polled.body.sessionToken as string}` } });
      expect(models.status).toBe(200);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('asks for the code when opened without one, and explains an unknown code', async () => {
    const { page, context } = await openPage(browser, testApp.url);
    try {
      await page.goto('/account');
      await signUpOnPage(page, testApp.url, `e2e-device-entry-${Date.now()}@example.com`);
      await page.getByTestId('account-email').waitFor();
      await page.goto('/device');
      await page.getByLabel('Code shown by your device').fill('bbbb-bbbb');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('No pending device login has the code BBBB-BBBB').waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'device-unknown-code.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });
});

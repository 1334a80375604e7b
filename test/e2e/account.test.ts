/**
 * `/account` in Chromium against the real app (PostgreSQL + Redis): a new member signs up, creates an API
 * key and sees the token exactly once (with a copy button), the token works on /v1/models, the key list
 * shows only prefix and last 4, sessions are listed, and a returning member signs in with an email code.
 */
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { enterSignUpCode, ensureBuilt, launchChromium, openPage, resultsDir } from './identity-browser.ts';

let testApp: TestApp;
let cleanup: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  const mode = await realMode();
  cleanup = mode.cleanup;
  testApp = await startApp(mode.config);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await cleanup?.();
});

describe('account page', () => {
  it('sign up, create a key and see it once, then it only shows as prefix…last4', async () => {
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      const email = `e2e-${Date.now()}@example.com`;
      await page.goto('/account');
      await page.getByRole('tab', { name: 'Create account' }).click();
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByLabel(/^Password/).fill('a long enough password');
      await page.screenshot({ path: resolve(resultsDir, 'account-sign-up.png'), fullPage: true });
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByLabel('6-digit code').waitFor({ timeout: 10_000 });
      await page.screenshot({ path: resolve(resultsDir, 'account-sign-up-code.png'), fullPage: true });
      await enterSignUpCode(page, testApp.url, email);
      await expect.poll(() => page.getByTestId('account-email').textContent(), { timeout: 10_000 }).toBe(email);
      await page.getByText('No API keys yet.').waitFor();

      const cookie = (await context.cookies()).find((c) => c.name === 'svc_membership_session')!;
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(await page.evaluate(() => document.cookie)).not.toContain('svc_membership_session');

      await page.getByLabel('Key name').fill('laptop');
      await page.getByRole('button', { name: 'Create key' }).click();
      const tokenLocator = page.getByTestId('new-key-token');
      await tokenLocator.waitFor();
      const token = (await tokenLocator.textContent())!.trim();
      expect(token).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
      await page.getByRole('button', { name: 'Copy' }).waitFor();
      await page.getByRole('row', { name: /laptop/ }).waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'account-key-created.png'), fullPage: true });

      const models = await fetch(`${testApp.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
      expect(models.status).toBe(200);

      await page.reload();
      await page.getByRole('row', { name: /laptop/ }).waitFor();
      const html = await page.content();
      expect(html).not.toContain(token);
      expect(html).toContain(`${token.slice(0, 12)}…${token.slice(-4)}`);
      await page.getByText('This browser').waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'account-signed-in.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('signs in with an email code and shows a precise error for a wrong code', async () => {
    const email = `e2e-code-${Date.now()}@example.com`;
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await page.goto('/account');
      await page.getByRole('tab', { name: 'Email me a code' }).click();
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByRole('button', { name: 'Send code' }).click();
      // No mail server in tests: the page says the code was not emailed, and where staff read it.
      await page.getByText(`No mail server is configured, so the code for ${email} was not emailed`).waitFor();
      const code = /\b(\d{6})\b/.exec(testApp.app.services.mailer.lastTo(email)!.text)![1]!;
      await page.getByLabel('6-digit code').fill(code === '000000' ? '111111' : '000000');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').getByText('The code is wrong or has expired').waitFor();
      await page.getByLabel('6-digit code').fill(code);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByTestId('account-email').textContent()).toBe(email);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

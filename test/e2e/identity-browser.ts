/** Shared by the account and device e2e tests: Debian's Chromium, a fresh context per test, problems collected. */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { mailedCode } from '../helpers/browser.ts';

export const repoRoot = resolve(import.meta.dirname, '../..');
export const resultsDir = resolve(repoRoot, 'test-results');

export async function ensureBuilt(): Promise<void> {
  if (!existsSync(resolve(repoRoot, 'dist/web/index.html'))) {
    const { build } = await import('vite');
    await build({ configFile: resolve(repoRoot, 'vite.config.ts'), logLevel: 'warn' });
  }
  mkdirSync(resultsDir, { recursive: true });
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-sync'],
  });
}

export async function openPage(browser: Browser, baseURL: string): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    // A 401/404 the page expects (e.g. a wrong code) is logged by Chromium as a failed resource: not a bug.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return { page, context, problems };
}

/**
 * Creates an account on the page's sign-in panel as a member does: the form, then the emailed code (read
 * from the outbox of the app this process serves at `baseURL`), which creates the account and signs in.
 */
export async function signUpOnPage(page: Page, baseURL: string, email: string, password = 'a long enough password'): Promise<void> {
  await page.getByRole('tab', { name: 'Create account' }).click();
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await enterSignUpCode(page, baseURL, email);
}

/** The second step of sign-up: the code from the app's outbox. */
export async function enterSignUpCode(page: Page, baseURL: string, email: string): Promise<void> {
  const field = page.getByLabel('6-digit code');
  // Sign-up hashes the password (argon2id): more than the default wait on a busy machine.
  await field.waitFor({ timeout: 10_000 });
  await field.fill(mailedCode(baseURL, email));
  await page.getByRole('button', { name: 'Confirm and create account' }).click();
}

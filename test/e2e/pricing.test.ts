/**
 * The built web app in Debian's Chromium against the real app (PostgreSQL + Redis): the pricing page
 * renders the catalogue the server is configured with, shows a working error state, and the shell
 * navigates client-side. Expects `dist/web` (CI runs `npm run build` first); builds it when missing.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const resultsDir = resolve(repoRoot, 'test-results');

let testApp: TestApp;
let cleanup: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(resolve(repoRoot, 'dist/web/index.html'))) {
    const { build } = await import('vite');
    await build({ configFile: resolve(repoRoot, 'vite.config.ts'), logLevel: 'warn' });
  }
  mkdirSync(resultsDir, { recursive: true });
  const mode = await realMode();
  cleanup = mode.cleanup;
  testApp = await startApp(mode.config);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await cleanup?.();
});

/** A fresh context per test, and every uncaught page error or console error collected. */
async function openPage(viewport = { width: 1280, height: 900 }): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ viewport, baseURL: testApp.url });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  return { page, context, problems };
}

async function text(page: Page, selector: string): Promise<string> {
  const locator = page.locator(selector);
  await locator.waitFor();
  return normalize(await locator.innerText());
}

function normalize(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

const money = (value: { currency: string; amount: string }) => `${value.currency} ${value.amount}`;
// Intl.NumberFormat's percent in English (lib/format.ts `formatDiscount`).
const percentOff = (fraction: number) => `-${Math.round(fraction * 100)}%`;

describe('pricing page', () => {
  it('renders plans, Max packages, pool bars and the model price table from the configured catalogue', async () => {
    const { plans, models } = testApp.app.services;
    const { page, context, problems } = await openPage();
    try {
      await page.goto('/pricing');
      await page.locator('.plan-card').first().waitFor();

      const planNames = await page.locator('.plan-card h3').allInnerTexts();
      expect(planNames.map(normalize)).toEqual(plans.list().map((plan) => plan.name));

      const max = plans.list().find((plan) => plan.id === 'max');
      expect(max?.packages.map((pkg) => pkg.id)).toEqual(['max_x5', 'max_x20']);
      for (const pkg of max?.packages ?? []) {
        const offer = await text(page, `.plan-card[data-plan="max"] [data-package="${pkg.id}"]`);
        expect(offer).toContain(pkg.name);
        expect(offer).toContain(`${money(pkg.price)} / month`);
        expect(offer).toContain(`×${pkg.multiplier} pools`);
      }

      // The pools are drawn: each bar's value is the configured pool, and its length is to scale.
      const [x5, x20] = max?.packages ?? [];
      const fastDay = (pkg: typeof x5) => pkg?.pools.find((pool) => pool.class === 'fast' && pool.window === 'day');
      expect(await text(page, '[data-pool="fast-day"] [data-package="max_x20"] .bar__value')).toBe(money(fastDay(x20)!.limit));
      const widthOf = async (id: string) => (await page.locator(`[data-pool="fast-day"] [data-package="${id}"] .bar__fill`).boundingBox())?.width ?? 0;
      const ratio = (await widthOf('max_x5')) / (await widthOf('max_x20'));
      expect(ratio).toBeCloseTo(fastDay(x5)!.limit.amountMicros / fastDay(x20)!.limit.amountMicros, 1);

      // One row per model, in catalogue order, with list and promoted prices and the discount.
      await page.locator('tr[data-model]').first().waitFor();
      const rowIds = await page.locator('tbody tr[data-model]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-model')));
      expect(rowIds).toEqual(models.models.map((model) => model.id));
      const promoted = models.models.find((model) => model.price.discount > 0);
      expect(promoted, 'the default catalogue has a promotion').toBeDefined();
      const row = await text(page, `tr[data-model="${promoted!.id}"]`);
      expect(row).toContain(promoted!.tierLabel);
      expect(row).toContain(money(promoted!.price.input.effective));
      expect(row).toContain(money(promoted!.price.input.list));
      expect(row).toContain(money(promoted!.price.output.effective));
      expect(row).toContain(percentOff(promoted!.price.discount));

      await page.screenshot({ path: resolve(resultsDir, 'pricing.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('fits a phone screen', async () => {
    const { page, context, problems } = await openPage({ width: 390, height: 844 });
    try {
      await page.goto('/pricing');
      await page.locator('tr[data-model]').first().waitFor();
      await page.locator('.bar').first().waitFor();
      // Only the price table may scroll sideways, inside its own box; the page itself must not.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBe(0);
      // …and on a phone the prices are on screen, not scrolled out of view.
      const price = await page.locator('tr[data-model] td[data-label^="Output"]').first().boundingBox();
      expect(price && price.x + price.width).toBeLessThanOrEqual(390);
      await page.screenshot({ path: resolve(resultsDir, 'pricing-mobile.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows the error and recovers with Retry when /graphql fails', async () => {
    const { page, context } = await openPage();
    try {
      await page.route('**/graphql', (route) => route.fulfill({ status: 500, contentType: 'text/plain', body: 'upstream exploded' }));
      await page.goto('/pricing');

      const alerts = page.getByRole('alert');
      await alerts.nth(1).waitFor();
      expect(await alerts.count()).toBe(2);
      const plansAlert = normalize(await alerts.nth(0).innerText());
      expect(plansAlert).toContain('The plans could not be loaded.');
      expect(plansAlert).toContain('500');
      expect(normalize(await alerts.nth(1).innerText())).toContain('The model prices could not be loaded.');
      expect(await page.locator('.plan-card').count()).toBe(0);
      await page.screenshot({ path: resolve(resultsDir, 'pricing-error.png'), fullPage: true });

      // The server is back: Retry fetches again and the plans appear.
      await page.unroute('**/graphql');
      await alerts.nth(0).getByRole('button', { name: 'Retry' }).click();
      await page.locator('.plan-card').first().waitFor();
      const names = (await page.locator('.plan-card h3').allInnerTexts()).map(normalize);
      expect(names).toEqual(testApp.app.services.plans.list().map((plan) => plan.name));
    } finally {
      await context.close();
    }
  });
});

describe('app shell', () => {
  it('serves the landing page and navigates to /pricing without reloading', async () => {
    const { page, context, problems } = await openPage();
    try {
      await page.goto('/');
      expect(await text(page, 'h1')).toMatch(/API/);
      expect(await text(page, '.hero__base code')).toBe(`${testApp.url}/v1`);
      // The plan teaser comes from the same GraphQL catalogue.
      await page.locator('.plan-teaser__name').first().waitFor();
      const teaser = (await page.locator('.plan-teaser__name').allInnerTexts()).map(normalize);
      expect(teaser).toEqual(testApp.app.services.plans.list().map((plan) => plan.name));
      await page.screenshot({ path: resolve(resultsDir, 'landing.png'), fullPage: true });

      await page.evaluate(() => Object.assign(window, { spaMarker: 'same document' }));
      const pricingLink = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Pricing' });
      await pricingLink.click();
      await page.waitForURL(`${testApp.url}/pricing`);
      await page.locator('.plan-card').first().waitFor();
      expect(await page.evaluate(() => (window as unknown as { spaMarker?: string }).spaMarker)).toBe('same document');
      expect(await pricingLink.getAttribute('aria-current')).toBe('page');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('answers every page route: quick start and the enterprise docs with this origin, the enterprise pages asking to sign in, the admin sign-in', async () => {
    const { page, context, problems } = await openPage();
    try {
      await page.goto('/docs');
      expect(await text(page, 'h1')).toBe('Quick start');
      const body = normalize(await page.locator('main').innerText());
      expect(body).toContain(`baseURL: '${testApp.url}/v1'`);
      expect(body).toContain(`base_url="${testApp.url}/v1"`);
      expect(body).toContain('svc_live_');
      await page.screenshot({ path: resolve(resultsDir, 'docs.png'), fullPage: true });
      await page.goto('/docs/enterprise');
      expect(await text(page, 'h1')).toBe('Enterprise organisations');
      const enterpriseDocs = normalize(await page.locator('main').innerText());
      expect(enterpriseDocs).toContain(`baseURL: '${testApp.url}/v1'`);
      expect(enterpriseDocs).toContain('svc_ent_');

      // Signed out, the enterprise pages ask to sign in first.
      for (const [path, heading] of [
        ['/enterprise/apply', 'Apply for an organisation'],
        ['/enterprise/console', 'Organisation console'],
      ] as const) {
        await page.goto(path);
        expect(await text(page, 'h1'), path).toBe(heading);
        await page.getByText('Sign in first').waitFor();
        expect(await page.getByRole('main').getByRole('link', { name: 'Sign in' }).getAttribute('href')).toBe('/account');
      }
      // The admin app is built (test/e2e/admin.test.ts): signed out, it asks for a staff sign-in.
      for (const path of ['/admin', '/admin/accounts']) {
        await page.goto(path);
        expect(await text(page, 'h1'), path).toBe('Sign in to the admin app');
      }
      await page.goto('/enterprise/apply');
      await page.getByText('Sign in first').waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'enterprise-signed-out.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/**
 * Issue 46 item 1 in Chromium against the real app (PostgreSQL + Redis) with the sandbox provider: a new
 * commercial organisation's console shows it on Free; its owner clicks Upgrade in the console's plan
 * section, pays in the same dialog and checkout page a member uses, and comes back to the console with the
 * organisation on Pro while their own account stays on Free. A plain member of it is offered no upgrade.
 * Screenshots go to test-results/organisation-upgrade-*.png.
 */
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { addMember, applyFor } from '../helpers/enterprise.ts';
import { seed } from '../helpers/seed.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir } from './identity-browser.ts';

let a: TestApp;
let cleanup: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  const mode = await realMode();
  cleanup = mode.cleanup;
  a = await startApp(mode.config);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await a?.close();
  await cleanup?.();
});

const shot = async (page: Page, name: string) => {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: resolve(resultsDir, `organisation-upgrade-${name}.png`), fullPage: true });
};

const packageOf = async (accountId: string) =>
  ((await a.app.services.db.orm.em.getConnection().execute<{ plan_package: string }[]>('select plan_package from account where id = ?', [accountId]))[0]!).plan_package;

describe('organisation upgrade in the console', () => {
  it('the owner upgrades the organisation to Pro through the sandbox checkout; a plain member is offered no upgrade', async () => {
    const owner = await seed(a).member({ tag: 'e2e-org-upgrade' });
    const colleague = await seed(a).member({ tag: 'e2e-org-colleague' });
    const name = `Upgrade Works ${Date.now().toString(36)}`;
    const { organisationId } = await applyFor(owner, { organisation: name });
    await addMember(owner, organisationId!, colleague, 'member', (id) => a.app.services.db.orm.em.getConnection().execute('update account set email_verified_at = now() where id = ?', [id]));
    const session = await openPage(browser, a.url);
    const { page, context, problems } = session;
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: owner.web.cookie!, url: a.url }]);
      await page.goto('/enterprise/console');
      await page.getByRole('heading', { level: 2, name }).waitFor();
      expect(await page.locator('.org-summary').innerText()).toContain('Package Free');
      const plan = page.getByTestId('organisation-plan');
      await plan.getByRole('heading', { name: 'Plan' }).waitFor();
      await plan.getByText("Upgrade it here: you pay, and the package is the organisation's, not yours.").waitFor();
      await shot(page, 'console-free');

      await plan.locator('.plan-option[data-package="pro"]').getByRole('button', { name: 'Upgrade to Pro' }).click();
      const dialog = page.getByRole('dialog', { name: 'Upgrade to Pro' });
      await dialog.locator('.pay-option[data-provider="sandbox"][data-currency="USD"]').click();
      await dialog.getByTestId('quote').waitFor();
      await dialog.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(/\/checkout\/svc[A-Za-z0-9]{24}$/);
      await page.getByRole('heading', { name: 'Sandbox payment' }).waitFor();
      await page.getByRole('button', { name: 'Pay USD\u00a09.00' }).click();
      await page.getByRole('heading', { name: 'Payment received' }).waitFor();
      expect(await page.getByTestId('checkout-outcome').innerText()).toContain('The organisation is on Pro now');
      await shot(page, 'paid');

      await page.getByRole('link', { name: 'Back to the organisation console' }).click();
      await page.getByRole('heading', { level: 2, name }).waitFor();
      await expect.poll(() => page.locator('.org-summary').innerText(), { timeout: 10_000 }).toContain('Package Pro');
      await plan.getByText(/^Ends on .+, won't renew\.$/).waitFor();
      await shot(page, 'console-pro');
      expect(await packageOf(organisationId!)).toBe('pro');
      expect(await packageOf(owner.id)).toBe('free');

      // A plain member sees the package, and no way to buy for the organisation.
      await context.clearCookies();
      await context.addCookies([{ name: 'svc_membership_session', value: colleague.web.cookie!, url: a.url }]);
      await page.goto('/enterprise/console');
      await page.getByRole('heading', { level: 2, name }).waitFor();
      await plan.getByText("Only the organisation's owner and admins can upgrade it.").waitFor();
      expect(await plan.getByRole('button').count()).toBe(0);
      await shot(page, 'console-member');
      expect(problems).toEqual([]);
    } catch (error) {
      await shot(page, 'failure').catch(() => undefined);
      throw new Error(`${(error as Error).message}\nbrowser problems: ${JSON.stringify(problems)}`, { cause: error });
    } finally {
      await context.close();
    }
  });
});

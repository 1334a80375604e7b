/**
 * `/account/credits` and `/admin/credit-codes` in Chromium against the real app (PostgreSQL + Redis): an
 * admin mints a code on the admin page, a member redeems it on the Credits page and the balance follows,
 * turns paying from credit on, and buys credit with the sandbox — back on the page the balance has moved
 * live. Screenshots in test-results/.
 */
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir } from './identity-browser.ts';

let testApp: TestApp;
let cleanup: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  const mode = await realMode();
  cleanup = mode.cleanup;
  testApp = await startApp(mode.config, { config: { payments: { sandbox: { enabled: true } } } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await cleanup?.();
});

describe('credits', () => {
  it('admin mints a code; the member redeems it, opts in and buys credit; the balance follows live', async () => {
    const admin = await seed(testApp).staff('admin');
    const member = await seed(testApp).member({ tag: 'e2e-credits' });
    const staffTab = await openPage(browser, testApp.url);
    const memberTab = await openPage(browser, testApp.url);
    try {
      await staffTab.context.addCookies([{ name: 'svc_membership_session', value: admin.web.cookie!, url: testApp.url }]);
      await staffTab.page.goto('/admin/credit-codes');
      await staffTab.page.getByLabel('Value per code').fill('3');
      await staffTab.page.getByLabel('Codes', { exact: true }).fill('2');
      await staffTab.page.getByLabel('Note').fill('e2e');
      await staffTab.page.getByRole('button', { name: 'Mint codes' }).click();
      await staffTab.page.getByText('2 codes minted.').waitFor();
      await staffTab.page.screenshot({ path: resolve(resultsDir, 'credit-codes-admin.png'), fullPage: true });
      const { rows } = await testApp.app.services.db.orm.em.fork().getConnection().execute(`select code from credit_code order by code limit 1`).then((found) => ({ rows: found as { code: string }[] }));
      const code = rows[0]!.code;

      await memberTab.context.addCookies([{ name: 'svc_membership_session', value: member.web.cookie!, url: testApp.url }]);
      await memberTab.page.goto('/account/credits');
      const balance = memberTab.page.getByTestId('credit-balance');
      await balance.waitFor();
      expect(await balance.textContent()).toMatch(/0\.00/);
      await memberTab.page.getByLabel('Code', { exact: true }).fill(code.toLowerCase());
      await memberTab.page.getByRole('button', { name: 'Redeem' }).click();
      await memberTab.page.getByText(/Redeemed: .*3\.00/).waitFor();
      await expect.poll(() => balance.textContent()).toMatch(/3\.00/);
      await memberTab.page.getByLabel('Pay from credit when a pool is used up').click();
      await expect.poll(() => memberTab.page.getByLabel('Pay from credit when a pool is used up').isChecked()).toBe(true);
      await expect.poll(async () => (await testApp.app.services.creditLedger.balance(member.id)).payFromCredit).toBe(true);

      // Buy 10 through the sandbox: the checkout page pays; the Credits page (reopened) shows 13.
      await memberTab.page.getByRole('button', { name: /10\.00/ }).click();
      await memberTab.page.getByRole('button', { name: 'Continue to payment' }).click();
      await memberTab.page.waitForURL('**/checkout/**');
      const orderId = decodeURIComponent(new URL(memberTab.page.url()).pathname.split('/').at(-1)!);
      expect((await member.web.fetch(`/api/membership/payments/sandbox/${orderId}/pay`, { body: {} })).status).toBe(200);
      await memberTab.page.goto('/account/credits');
      await expect.poll(() => memberTab.page.getByTestId('credit-balance').textContent(), { timeout: 10_000 }).toMatch(/13\.00/);
      await memberTab.page.getByText('Code redeemed').waitFor();
      await memberTab.page.screenshot({ path: resolve(resultsDir, 'credits-page.png'), fullPage: true });
      expect(memberTab.problems).toEqual([]);
      expect(staffTab.problems).toEqual([]);
    } finally {
      await staffTab.context.close();
      await memberTab.context.close();
    }
  }, 120_000);
});

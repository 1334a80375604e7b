/**
 * The admin app in Chromium against the real app (PostgreSQL + Redis): a support user signs in at /admin,
 * sees the dashboard drawn from a month of ledger rows, finds an account by the start of its email, changes its
 * package with a reason (after being told a reason is needed), disables and enables it, and finds all three
 * actions in the audit log. A member who opens /admin is told it is for staff only. Screenshots of every
 * step go to test-results/admin-*.png.
 */
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed, type Person } from '../helpers/seed.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir } from './identity-browser.ts';
import { seedLedger } from './ledger-fixture.ts';

let testApp: TestApp;
let mode: Awaited<ReturnType<typeof realMode>>;
let browser: Browser;
let support: Person;
let target: Person;
const tag = `acme${Date.now().toString(36)}`;

beforeAll(async () => {
  await ensureBuilt();
  mode = await realMode();
  testApp = await startApp(mode.config);
  const people = seed(testApp);
  support = await people.staff('support', 'e2e-support');
  target = await people.member({ tag: `${tag}-buyer` });
  await people.member({ tag: `${tag}-other` });
  await target.withKey('billing-server');
  await target.withKey('laptop');
  const others = await Promise.all([people.member({ tag: 'someone' }), people.member({ tag: 'another' })]);
  await seedLedger(mode.database, [target.id, ...others.map((o) => o.id)]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await mode?.cleanup();
});

const shot = (page: Page, name: string) => page.screenshot({ path: resolve(resultsDir, `admin-${name}.png`), fullPage: true });

describe('admin app', () => {
  it('a member who opens /admin is told it is for staff only; the signed-out get a sign-in form', async () => {
    const member = await seed(testApp).member({ tag: 'curious' });
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      await page.goto('/admin/accounts');
      await page.getByRole('heading', { name: 'Sign in to the admin app' }).waitFor();
      expect(await page.getByRole('navigation', { name: 'Admin' }).count()).toBe(0);
      await shot(page, 'signed-out');

      await context.addCookies([{ name: 'svc_membership_session', value: member.web.cookie!, url: testApp.url }]);
      await page.goto('/admin');
      await page.getByRole('heading', { name: 'Staff only' }).waitFor();
      expect(await page.getByText(member.email).count()).toBeGreaterThan(0);
      expect(await page.getByRole('navigation', { name: 'Admin' }).count()).toBe(0);
      await shot(page, 'staff-only');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a fresh service: the dashboard, the account page and the audit log say plainly that there is nothing yet', async () => {
    const fresh = await realMode();
    const empty = await startApp(fresh.config);
    const { page, context, problems } = await openPage(browser, empty.url);
    try {
      const admin = await seed(empty).staff('admin', 'first-admin');
      await context.addCookies([{ name: 'svc_membership_session', value: admin.web.cookie!, url: empty.url }]);
      await page.goto('/admin?range=last_90_days');
      await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
      await page.getByText('No requests in this range.').waitFor();
      expect(await page.getByText('Nothing in this range').count()).toBe(4);
      await shot(page, 'dashboard-empty');
      const member = await seed(empty).member({ tag: 'newcomer' });
      await page.goto(`/admin/accounts/${member.id}`);
      await page.getByText('No requests yet.').waitFor();
      await page.getByText('No live keys.').waitFor();
      await page.getByText('Nothing recorded.').waitFor();
      // Admins see the role control; it is theirs alone.
      await page.getByRole('button', { name: 'Change role' }).waitFor();
      await shot(page, 'account-empty');
      // On their own account, staff are told to ask someone else (the server refuses it too).
      await page.goto(`/admin/accounts/${admin.id}`);
      await page.getByText('This is your own account').waitFor();
      expect(await page.getByRole('button', { name: 'Disable account' }).count()).toBe(0);
      await page.goto('/admin/audit');
      await page.getByText('Nothing has been recorded yet.').waitFor();
      await shot(page, 'audit-empty');
      await page.goto('/admin/accounts/00000000-0000-4000-8000-000000000000');
      await page.getByText('There is no account with this id.').waitFor();
      await page.goto('/admin/nowhere');
      await page.getByText('There is no admin page at this address.').waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await empty.close();
      await fresh.cleanup();
    }
  });

  it('support signs in, reads the dashboard, changes a package, disables and enables an account, and finds it all in the audit log', async () => {
    const { page, context, problems } = await openPage(browser, testApp.url);
    try {
      // Sign in on the admin app itself.
      await page.goto('/admin');
      await page.getByLabel('Email', { exact: true }).fill(support.email);
      await page.getByLabel('Password', { exact: true }).fill(support.password);
      await page.getByRole('button', { name: 'Sign in' }).click();

      // Dashboard: tiles and four charts drawn from the ledger.
      await page.getByRole('heading', { name: 'Dashboard' }).waitFor({ timeout: 15_000 });
      await page.getByRole('navigation', { name: 'Admin' }).waitFor();
      await page.getByRole('img', { name: /^Requests per day/ }).waitFor();
      const expected = (await testApp.app.services.stats.stats(
        { accountId: support.id, email: support.email, role: 'support', payer: { kind: 'account', id: support.id, package: 'free' }, credential: { kind: 'web_session', id: 'x' } },
        'last_30_days',
      )).totals;
      expect(expected.requests).toBeGreaterThan(200);
      const requestsTile = page.locator('.tile').filter({ has: page.locator('.tile__label', { hasText: /^Requests$/ }) }).locator('.tile__value');
      expect(await requestsTile.textContent()).toBe(expected.requests.toLocaleString('en-US'));
      expect(await page.locator('.chart svg').count()).toBe(4);
      expect(await page.locator('.chart').first().locator('rect:not(.chart__hit)').count()).toBe(30);
      expect(await page.getByRole('row').filter({ hasText: 'svc-2.1-search' }).count()).toBe(1);
      await page.locator('.chart').first().locator('.chart__hit').nth(20).hover();
      await page.locator('.chart__tooltip').waitFor();
      await shot(page, 'dashboard');
      await page.getByRole('radio', { name: '7 days' }).click();
      await expect.poll(() => page.locator('.chart').first().locator('rect:not(.chart__hit)').count(), { timeout: 10_000 }).toBe(7);
      await page.waitForURL('**/admin?range=last_7_days');
      await shot(page, 'dashboard-7-days');

      // Accounts: the search box finds both accounts whose email starts with the tag (any case).
      await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Accounts' }).click();
      await page.getByRole('heading', { name: 'Accounts' }).waitFor();
      await page.getByRole('searchbox').fill(tag.toUpperCase());
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(`**/admin/accounts?q=${tag.toUpperCase()}`);
      await expect.poll(() => page.locator('.search-hit[data-kind="account"]').count(), { timeout: 10_000 }).toBe(2);
      await shot(page, 'accounts-search');
      await page.getByRole('searchbox').fill('nobody-has-this-address');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('Nothing matches “nobody-has-this-address”.').waitFor();
      await shot(page, 'accounts-empty');
      await page.goBack();
      await page.getByRole('link', { name: target.email }).click();

      // The account page.
      await page.waitForURL(`**/admin/accounts/${target.id}`);
      await page.getByRole('heading', { name: target.email }).waitFor();
      // Support never sees the admin-only role control.
      expect(await page.getByRole('button', { name: 'Change role' }).count()).toBe(0);
      expect(await page.locator('[role="meter"]').count()).toBe(6);
      expect(await page.getByRole('row').filter({ hasText: 'billing-server' }).count()).toBe(1);
      await page.getByText('Nothing recorded.').waitFor();
      await shot(page, 'account');

      // Change the package: refused without a reason, then done with one.
      await page.getByRole('button', { name: 'Change package' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Package').selectOption('max_x5');
      await dialog.getByRole('button', { name: 'Change package' }).click();
      await dialog.getByText('Give a reason: it is kept in the audit log with your name.').waitFor();
      await shot(page, 'package-needs-reason');
      await dialog.getByLabel(/^Reason/).fill('Conference speaker, agreed by sales');
      await dialog.getByRole('button', { name: 'Change package' }).click();
      await page.getByRole('status').filter({ hasText: 'Package changed to max_x5.' }).waitFor();
      expect(await dialog.count()).toBe(0);
      expect(await page.locator('.account-header .package-badge').textContent()).toContain('max_x5');
      expect((await testApp.app.services.accounts.findById(target.id))!.planPackage).toBe('max_x5');

      // Disable, then enable.
      await page.getByRole('button', { name: 'Disable account' }).click();
      await dialog.getByLabel(/^Reason/).fill('Chargeback on order 2231');
      await shot(page, 'disable-dialog');
      await dialog.getByRole('button', { name: 'Disable account' }).click();
      await page.getByRole('status').filter({ hasText: 'Account disabled.' }).waitFor();
      await page.locator('.account-header .status-pill--disabled').waitFor();
      expect((await fetch(`${testApp.url}/v1/models`, { headers: { authorization: `Bearer ${await target.key('probe')}` } })).status).toBe(401);
      await page.getByRole('button', { name: 'Enable account' }).click();
      await dialog.getByLabel(/^Reason/).fill('Chargeback withdrawn');
      await dialog.getByRole('button', { name: 'Enable account' }).click();
      await page.getByRole('status').filter({ hasText: 'Account enabled.' }).waitFor();
      await page.locator('.account-header .status-pill--active').waitFor();
      // The page's own audit entries, newest first.
      await expect.poll(() => page.locator('.audit-table tbody tr').count(), { timeout: 10_000 }).toBe(3);
      expect(await page.locator('.audit-table tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-action')))).toEqual([
        'account:enable',
        'account:disable',
        'account:set-package',
      ]);
      await shot(page, 'account-after');

      // The audit log, narrowed to what this support user did.
      await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();
      await page.getByLabel('Who (email)').fill(support.email);
      await page.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(() => page.locator('.audit-table tbody tr').count(), { timeout: 10_000 }).toBe(3);
      const rows = page.locator('.audit-table tbody tr');
      expect(await rows.nth(0).textContent()).toContain('Chargeback withdrawn');
      expect(await rows.nth(1).textContent()).toContain('Chargeback on order 2231');
      expect(await rows.nth(2).textContent()).toContain('Conference speaker, agreed by sales');
      expect(await rows.nth(2).textContent()).toMatch(/Package\s*Free\s*→\s*Max x5/);
      await shot(page, 'audit');
      await page.getByLabel('What').selectOption('account:disable');
      await page.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(() => page.locator('.audit-table tbody tr').count(), { timeout: 10_000 }).toBe(1);
      await page.getByLabel('Who (email)').fill('nobody@example.com');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText('No entries match these filters.').waitFor();
      expect(problems).toEqual([]);
    } catch (error) {
      await shot(page, 'failure');
      throw new Error(`${(error as Error).message}\nbrowser problems: ${JSON.stringify(problems)}`, { cause: error });
    } finally {
      await context.close();
    }
  });
});

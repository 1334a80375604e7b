/**
 * Enterprise organisations in Chromium against the real app on two instances (PostgreSQL + Redis) and the
 * scripted upstream. A member applies for an enterprise organisation on instance A (after being told what
 * the form still needs); support staff, in a second browser on instance B, watch it arrive in the live
 * review queue and approve it; the applicant's page turns approved without a reload; the console mints an
 * `svc_ent_` key; a script calls /v1/chat/completions with it through the openai SDK; the console shows the
 * connecting address, live. Screenshots of every step go to test-results/enterprise-*.png.
 */
import { resolve } from 'node:path';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir } from './identity-browser.ts';

let a: TestApp;
let b: TestApp;
let upstream: ScriptedUpstream;
let cleanup: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  upstream = await startScriptedUpstream();
  const mode = await realMode();
  cleanup = mode.cleanup;
  a = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
  b = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await a?.close();
  await b?.close();
  await upstream?.close();
  await cleanup?.();
});

// From the top: the sticky header would otherwise be drawn over the middle of a full-page shot.
const shot = async (page: Page, name: string) => {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: resolve(resultsDir, `enterprise-${name}.png`), fullPage: true });
};
const notReloaded = (page: Page) => page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true);

describe('enterprise organisations', () => {
  it('apply → staff approve from the live queue on another instance → the page turns approved → mint a key → call the API → the console shows the address', async () => {
    const organisation = `Acme Research ${Date.now().toString(36)}`;
    const member = await seed(a).member({ tag: 'e2e-applicant' });
    const support = await seed(a).staff('support', 'e2e-reviewer');
    const applicant = await openPage(browser, a.url);
    const reviewer = await openPage(browser, b.url);
    const { page } = applicant;
    const staff = reviewer.page;
    try {
      await applicant.context.addCookies([{ name: 'svc_membership_session', value: member.web.cookie!, url: a.url }]);
      await reviewer.context.addCookies([{ name: 'svc_membership_session', value: support.web.cookie!, url: b.url }]);

      // Staff open the queue on instance B: nothing waits yet.
      await staff.goto('/admin/applications');
      await staff.getByText('Nothing is waiting for review.').waitFor();
      await staff.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      await shot(staff, 'queue-empty');

      // The member finds Enterprise in the header; with no organisation it is the application form.
      await page.goto('/account');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Enterprise' }).click();
      await page.waitForURL('**/enterprise/apply');
      await page.getByRole('heading', { level: 1, name: 'Apply for an organisation' }).waitFor();
      await shot(page, 'apply');

      // Submitting an empty form says what each field needs, next to it.
      await page.getByRole('button', { name: 'Submit application' }).click();
      await page.getByText("Enter the organisation's name.").waitFor();
      await page.getByText('Choose commercial or enterprise.').waitFor();
      await page.getByText('Choose a country.').waitFor();
      await page.getByText('Tell us what you will use svc for.').waitFor();
      await page.getByText('Enter an estimate; a round number is fine.').waitFor();
      await page.getByText(/fields need your attention/).waitFor();
      await shot(page, 'apply-invalid');

      await page.getByLabel('Organisation name').fill(organisation);
      await page.getByRole('radio', { name: /^Enterprise/ }).check();
      await page.getByLabel('Website').fill('not a website');
      await page.getByLabel('Country').selectOption('DE');
      await page.getByLabel('What you will use svc for').fill('Summarising lab notebooks for 40 researchers, mostly with the fast models.');
      await page.getByLabel('Expected tokens per month').fill('50000000');
      await page.getByText('That is about 50M tokens a month.').waitFor();
      await page.getByRole('button', { name: 'Submit application' }).click();
      await page.getByText('Enter a web address such as https://example.com, or leave it empty.').waitFor();
      await page.getByLabel('Website').fill('https://acme.example.com');
      await page.getByRole('button', { name: 'Submit application' }).click();

      // Pending: the state, the timeline, the withdraw button.
      await page.getByText('We are reviewing your application.').waitFor({ timeout: 15_000 });
      await page.locator('.app-card [data-state="pending_review"]').waitFor();
      await page.getByRole('button', { name: 'Withdraw application' }).waitFor();
      await shot(page, 'apply-pending');
      await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

      // It arrives in the queue on instance B without a reload.
      const row = staff.locator('tr', { hasText: organisation });
      await row.waitFor({ timeout: 10_000 });
      expect(await row.textContent()).toContain(member.email);
      expect(await row.textContent()).toContain('Enterprise');
      await shot(staff, 'queue');

      // The detail: what was sent, the applicant's account, the timeline; approve with a note.
      await row.getByRole('link', { name: organisation }).click();
      await staff.getByRole('heading', { level: 1, name: organisation }).waitFor();
      await staff.getByText('Summarising lab notebooks for 40 researchers').waitFor();
      await staff.getByText('None: this is their first.').waitFor();
      await shot(staff, 'detail');
      await staff.getByRole('button', { name: 'Turn down' }).click();
      const dialog = staff.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Turn down' }).click();
      await dialog.getByText('Give a reason: the applicant reads it, and it is kept in the audit log.').waitFor();
      await shot(staff, 'reject-needs-reason');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await staff.getByRole('button', { name: 'Approve' }).click();
      await dialog.getByLabel(/^Note to the applicant/).fill('Welcome aboard: 50M tokens a month fits the enterprise package.');
      await shot(staff, 'approve-dialog');
      await dialog.getByRole('button', { name: 'Approve' }).click();
      await staff.getByRole('status').filter({ hasText: `Approved: ${organisation} now exists` }).waitFor();
      await staff.locator('.account-header [data-state="approved"]').waitFor();
      await shot(staff, 'detail-approved');
      await staff.locator('.applicant-card').getByRole('link', { name: member.email }).click();
      await staff.getByRole('heading', { level: 1, name: member.email }).waitFor();
      const organisationRow = staff.getByRole('region', { name: 'Organisations' }).locator('tr', { hasText: organisation });
      await organisationRow.waitFor();
      expect(await organisationRow.textContent()).toContain('Owner');
      // The organisation's own account: its members instead of personal keys and sessions.
      await organisationRow.getByRole('link', { name: organisation }).click();
      await staff.locator('.account-header .role--organisation').waitFor();
      await staff.getByRole('heading', { level: 1, name: organisation }).waitFor();
      await staff.getByRole('region', { name: 'Members' }).locator('tr', { hasText: member.email }).waitFor();
      await shot(staff, 'organisation-account');
      await staff.goBack();
      await staff.goBack();

      // The applicant's page turns approved by itself.
      await page.getByText('Approved: your organisation is ready.').waitFor({ timeout: 10_000 });
      await page.getByText('Welcome aboard: 50M tokens a month fits the enterprise package.').first().waitFor();
      expect(await notReloaded(page)).toBe(true);
      await shot(page, 'apply-approved');

      // The console: mint a key (shown once), then nothing has connected yet.
      await page.getByRole('link', { name: 'Open the console' }).click();
      await page.waitForURL('**/enterprise/console**');
      await page.getByRole('heading', { level: 2, name: organisation }).waitFor();
      // The package by its name, though the public catalogue leaves enterprise out.
      expect(await page.locator('.org-summary').innerText()).toContain('Package Enterprise ·');
      await page.getByText('No keys yet.').waitFor();
      await page.getByText('No requests with these keys yet.').waitFor();
      await page.getByLabel('Key name').fill('lab-worker');
      await page.getByRole('button', { name: 'Mint key' }).click();
      const token = (await page.getByTestId('new-org-key-token').textContent())!.trim();
      expect(token).toMatch(/^svc_ent_/);
      await page.locator('tr', { hasText: 'lab-worker' }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      await shot(page, 'console-key');
      await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

      // A script on a server uses the key through the official SDK, on the other instance.
      const client = new OpenAI({ apiKey: token, baseURL: `${b.url}/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'Hello from the lab.' }] });
      expect(completion.choices[0]?.message.content).toBeTruthy();
      await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'And again.' }] });

      // The address shows up in the console, with its count, live.
      const connection = page.locator('tr[data-ip]');
      await connection.first().waitFor({ timeout: 10_000 });
      expect(await connection.first().getAttribute('data-ip')).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
      await expect.poll(() => connection.first().getByTestId('connection-requests').textContent(), { timeout: 10_000 }).toBe('2');
      expect(await connection.first().textContent()).toContain('lab-worker');
      await expect.poll(() => page.locator('[data-request-id]').count(), { timeout: 10_000 }).toBe(2);
      // The organisation's pools moved (its own, drawn as on /account/usage), without a reload.
      await expect.poll(() => page.locator('[data-pool="fast-day"] [role="meter"]').getAttribute('aria-valuenow'), { timeout: 10_000 }).not.toBe('0');
      expect(await notReloaded(page)).toBe(true);
      await page.getByRole('button', { name: 'I have copied it' }).click();
      await shot(page, 'console-connections');

      // The queue is empty again, and the approved filter lists it.
      await staff.goto('/admin/applications');
      await staff.getByText('Nothing is waiting for review.').waitFor();
      await staff.getByRole('radio', { name: 'Approved', exact: true }).click();
      await staff.locator('tr', { hasText: organisation }).waitFor();
      await shot(staff, 'queue-approved');

      expect(applicant.problems).toEqual([]);
      expect(reviewer.problems).toEqual([]);
    } catch (error) {
      await shot(page, 'failure-applicant').catch(() => undefined);
      await shot(staff, 'failure-staff').catch(() => undefined);
      throw new Error(`${(error as Error).message}\nbrowser problems: ${JSON.stringify([...applicant.problems, ...reviewer.problems])}`, { cause: error });
    } finally {
      await applicant.context.close();
      await reviewer.context.close();
    }
  });

  it('a commercial application is ready at once; a pending one is withdrawn; a member of two organisations switches between them and sees the other one read-only', async () => {
    const owner = await seed(a).member({ tag: 'e2e-owner' });
    const colleague = await seed(a).member({ tag: 'e2e-colleague' });
    // The colleague confirmed their address, so adding them takes effect at once.
    await a.app.services.db.orm.em.getConnection().execute('update account set email_verified_at = now() where id = ?', [colleague.id]);
    await a.app.services.identity.invalidateAccount(colleague.id);
    const stamp = Date.now().toString(36);
    const { page, context, problems } = await openPage(browser, a.url);
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: owner.web.cookie!, url: a.url }]);
      await page.goto('/enterprise');
      await page.waitForURL('**/enterprise/apply');
      await page.getByRole('radio', { name: /^Commercial/ }).check();
      await page.getByLabel('Organisation name').fill(`Corner Shop ${stamp}`);
      await page.getByLabel('Country').selectOption('GB');
      await page.getByLabel('What you will use svc for').fill('Answering customer email in two languages, a few hundred a day.');
      await page.getByLabel('Expected tokens per month').fill('2,000,000');
      await page.getByRole('button', { name: 'Create organisation' }).click();
      await page.getByText('Your organisation is ready.').waitFor({ timeout: 15_000 });
      await page.getByText('automatically').first().waitFor();
      await shot(page, 'commercial-approved');

      // Another application, this time waiting for review, withdrawn.
      await page.getByRole('button', { name: 'Apply for another organisation' }).click();
      await page.getByRole('radio', { name: /^Enterprise/ }).check();
      await page.getByLabel('Organisation name').fill(`Corner Shop Group ${stamp}`);
      await page.getByLabel('Country').selectOption('GB');
      await page.getByLabel('What you will use svc for').fill('Every shop of the group, with a support assistant for each.');
      await page.getByLabel('Expected tokens per month').fill('90000000');
      await page.getByRole('button', { name: 'Submit application' }).click();
      await page.getByText('We are reviewing your application.').waitFor({ timeout: 15_000 });
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Withdraw application' }).click();
      await page.getByText('You withdrew this application.').waitFor();
      await page.getByRole('heading', { name: 'Earlier applications' }).waitFor();
      await shot(page, 'withdrawn');

      // The owner adds the colleague as a member.
      await page.goto('/enterprise/console');
      await page.getByRole('heading', { level: 2, name: `Corner Shop ${stamp}` }).waitFor();
      await page.getByLabel('Email', { exact: true }).fill(colleague.email);
      await page.getByRole('button', { name: 'Add member' }).click();
      await page.getByText(`${colleague.email} was added.`).waitFor();
      const role = page.getByRole('combobox', { name: `Role of ${colleague.email}` });
      expect(await role.inputValue()).toBe('member');
      await role.selectOption('admin');
      await page.reload();
      await expect.poll(() => role.inputValue(), { timeout: 10_000 }).toBe('admin');
      await shot(page, 'members');
      await role.selectOption('member');
      await page.reload();
      await expect.poll(() => role.inputValue(), { timeout: 10_000 }).toBe('member');

      // The colleague has an organisation of their own too: the console offers a switch.
      const own = await colleague.web.graphql<{ submitEnterpriseApplication: { state: string } }>(
        'mutation($input: EnterpriseApplicationInput!) { submitEnterpriseApplication(input: $input) { state } }',
        { input: { kind: 'commercial', organisation: `Colleague Co ${stamp}`, contactEmail: colleague.email, website: null, country: 'IE', useCase: 'A side project that drafts newsletters.', expectedMonthlyTokens: 1_000_000 } },
      );
      expect(own.data?.submitEnterpriseApplication.state).toBe('approved');
      await context.clearCookies();
      await context.addCookies([{ name: 'svc_membership_session', value: colleague.web.cookie!, url: a.url }]);
      await page.goto('/enterprise/console');
      const switcher = page.getByRole('combobox', { name: 'Organisation', exact: true });
      await switcher.waitFor();
      const options = await switcher.locator('option').allTextContents();
      expect(options.sort()).toEqual([`Colleague Co ${stamp}`, `Corner Shop ${stamp}`].sort());
      await switcher.selectOption({ label: `Corner Shop ${stamp}` });
      await page.getByRole('heading', { level: 2, name: `Corner Shop ${stamp}` }).waitFor();
      await page.getByText('You are a member of this organisation').waitFor();
      expect(await page.getByRole('button', { name: 'Mint key' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Add member' }).count()).toBe(0);
      await page.getByText('An owner or admin of the organisation can mint one.').waitFor();
      await shot(page, 'console-read-only');
      expect(problems).toEqual([]);
    } catch (error) {
      await shot(page, 'failure-second').catch(() => undefined);
      throw new Error(`${(error as Error).message}\nbrowser problems: ${JSON.stringify(problems)}`, { cause: error });
    } finally {
      await context.close();
    }
  });
});

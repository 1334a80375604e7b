/**
 * A newcomer's first ten minutes in Chromium (issue 49 items 1–2), as the new operator's first admin, a
 * member signing up and support staff see them, in English and Chinese, at 375, 768 and 1280 px:
 * - no model server configured: every admin page carries a banner saying what to set; one configured but
 *   silent: the banner names it and why, and goes away by itself the moment it answers;
 * - no mail server (development): the sign-up page says the code was not emailed and where staff read it;
 *   staff watch it arrive live at /admin/outbox and read the code out; it creates the account;
 * - production without mail: sign-up says plainly that email is not configured.
 * Screenshots: test-results/newcomer-*.png (not committed).
 */
import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, realMode, startApp, type TestApp } from '../helpers/app.ts';
import { uniqueEmail } from '../helpers/browser.ts';
import { seed, type Person } from '../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { ensureBuilt, launchChromium, resultsDir } from './identity-browser.ts';

const widths = [375, 768, 1280] as const;

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let browser: Browser;
let admin: Person;

beforeAll(async () => {
  await ensureBuilt();
  mode = await realMode();
  app = await startApp(mode.config);
  admin = await seed(app).staff('admin', 'first-admin');
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await mode?.cleanup();
});

/** A page in `locale`, signed in as `person` (or signed out), with console problems collected. */
async function open(target: TestApp, locale: 'en' | 'zh-CN', person: Person | null = null): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: target.url, locale });
  if (person) await context.addCookies([{ name: 'svc_membership_session', value: person.web.cookie!, url: target.url }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return { page, context, problems };
}

/** The page at each width: nothing wider than the screen, and a screenshot of each. */
async function shots(page: Page, name: string): Promise<void> {
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(100);
    await page.screenshot({ path: resolve(resultsDir, `newcomer-${name}-${width}.png`), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} at ${width} px is wider than the screen`).toBe(0);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe('no model server configured', () => {
  it('every admin page tells staff that chat cannot answer and what to set, in English and Chinese', async () => {
    for (const [locale, title, set] of [
      ['en', 'No model server is configured: chat cannot answer', 'Set SVC_UPSTREAM_URL to an OpenAI-compatible server'],
      ['zh-CN', '尚未配置模型服务器：对话无法回答', '请将 SVC_UPSTREAM_URL 设为兼容 OpenAI 接口的服务器'],
    ] as const) {
      const { page, context, problems } = await open(app, locale, admin);
      try {
        for (const path of ['/admin', '/admin/accounts']) {
          await page.goto(path);
          const banner = page.getByRole('alert').filter({ hasText: title });
          await banner.waitFor({ timeout: 15_000 });
          expect(await banner.textContent()).toContain(set);
          expect(await banner.textContent()).toContain('upstream_not_configured');
          expect(await banner.textContent()).toContain('models.<id>.deployments');
        }
        await shots(page, `banner-none-${locale}`);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  it('a member never sees it', async () => {
    const member = await seed(app).member();
    const { page, context } = await open(app, 'en', member);
    try {
      await page.goto('/admin');
      await page.getByRole('heading', { name: 'Staff only' }).waitFor();
      expect(await page.getByText('No model server is configured').count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});

describe('a configured model server that does not answer', () => {
  it('is named with the reason, and the banner goes away by itself once it answers', async () => {
    const port = await freePort();
    const silent = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: `http://127.0.0.1:${port}/v1` }, config: { gateway: { upstreamCheckSeconds: 0.5 } } });
    const support = await seed(silent).staff('support');
    const { page, context, problems } = await open(silent, 'en', support);
    let upstream: ScriptedUpstream | null = null;
    try {
      await page.goto('/admin');
      const banner = page.getByRole('alert').filter({ hasText: 'A model server does not answer' });
      await banner.waitFor({ timeout: 15_000 });
      expect(await banner.textContent()).toContain(`SVC_UPSTREAM_URL at http://127.0.0.1:${port}/v1: connection refused`);
      await shots(page, 'banner-down-en');
      upstream = await startScriptedUpstream({ port });
      await banner.waitFor({ state: 'detached', timeout: 15_000 });
      await page.screenshot({ path: resolve(resultsDir, 'newcomer-banner-gone-1280.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await upstream?.close();
      await silent.close();
    }
  });
});

describe('sign-up without a mail server', () => {
  for (const locale of ['en', 'zh-CN'] as const) {
    it(`the page says where the code went, and staff read it live in the outbox (${locale})`, async () => {
      const text =
        locale === 'en'
          ? { tab: 'Create account', email: 'Email', password: /^Password/, submit: 'Create account', code: '6-digit code', confirm: 'Confirm and create account', outboxNav: 'Outbox', sent: "staff can read it in the admin app's outbox (/admin/outbox)" }
          : { tab: '注册', email: '邮箱', password: /^密码/, submit: '注册', code: '6 位验证码', confirm: '确认并创建账户', outboxNav: '发件箱', sent: '工作人员可以在管理后台的发件箱（/admin/outbox）中查看' };
      const staff = await open(app, locale, admin);
      const member = await open(app, locale);
      try {
        // Staff have the outbox open first: the mail must arrive without a reload.
        await staff.page.goto('/admin');
        await staff.page.getByRole('navigation').getByRole('link', { name: text.outboxNav }).click();
        await staff.page.waitForURL('**/admin/outbox');
        await staff.page.locator('.live--live').waitFor();

        const email = uniqueEmail(`newcomer-${locale.toLowerCase()}`);
        await member.page.goto('/account');
        await member.page.getByRole('tab', { name: text.tab }).click();
        await member.page.getByLabel(text.email, { exact: true }).fill(email);
        await member.page.getByLabel(text.password).fill('a long enough password');
        await member.page.getByRole('button', { name: text.submit }).click();
        const sent = member.page.getByTestId('code-sent');
        await sent.waitFor({ timeout: 15_000 });
        const said = (await sent.textContent()) ?? '';
        expect(said).toContain(email);
        expect(said).toContain(text.sent);
        // It no longer claims the code was emailed.
        expect(said).not.toMatch(/We emailed|已向/);
        await shots(member.page, `sign-up-code-${locale}`);

        const mail = staff.page.getByTestId('outbox-mail').filter({ hasText: email });
        await mail.waitFor({ timeout: 15_000 });
        const code = ((await mail.getByTestId('outbox-code').textContent()) ?? '').trim();
        expect(code).toMatch(/^\d{6}$/);
        await shots(staff.page, `outbox-${locale}`);

        await member.page.getByLabel(text.code).fill(code);
        await member.page.getByRole('button', { name: text.confirm }).click();
        await expect.poll(() => member.page.getByTestId('account-email').textContent(), { timeout: 15_000 }).toBe(email);
        expect(staff.problems).toEqual([]);
        expect(member.problems).toEqual([]);
      } finally {
        await staff.context.close();
        await member.context.close();
      }
    });
  }
});

describe('production without a mail server', () => {
  it('sign-up says plainly that email is not configured, and offers no code', async () => {
    const keyPrefix = `${(mode.config.redis as { keyPrefix: string }).keyPrefix}production:`;
    const production = await startApp(mode.config, { config: { server: { production: true }, redis: { keyPrefix } } });
    try {
      for (const [locale, tab, codeTab, title] of [
        ['en', 'Create account', 'Email me a code', 'Email is not configured on this server'],
        ['zh-CN', '注册', '邮箱验证码登录', '本服务器未配置邮件'],
      ] as const) {
        const { page, context, problems } = await open(production, locale);
        try {
          await page.goto('/account');
          await page.getByRole('tab', { name: tab }).click();
          await page.getByText(title).waitFor();
          expect(await page.getByRole('button', { name: tab }).count()).toBe(0);
          await shots(page, `sign-up-no-mail-${locale}`);
          await page.getByRole('tab', { name: codeTab }).click();
          await page.getByText(title).waitFor();
          expect(await page.getByLabel(locale === 'en' ? 'Email' : '邮箱', { exact: true }).count()).toBe(0);
          expect(problems).toEqual([]);
        } finally {
          await context.close();
        }
      }
    } finally {
      await production.close();
    }
  });
});

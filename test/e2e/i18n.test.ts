/**
 * Chinese as a first-class language, in Chromium against the real app: a browser set to zh-CN gets every
 * page (home, pricing, docs, account, usage, device) in Chinese — the server's `<html lang>` already, then
 * the app's text, errors from the server's `messageZh`, numbers and money through Intl — with no English
 * UI string left (product names, model ids, code and data excepted). Switching to English in the header
 * sticks across a reload, follows the member to a new browser (stored on the account), and a signed-out
 * choice sticks too (cookie). The admin app (dashboard, accounts, an account, the audit log) speaks Chinese
 * to support staff in a zh-CN browser, orders included; upgrading, checkout, billing and receipts speak Chinese
 * to members, and so do the enterprise pages (an application, the review queue, the console with a key and
 * its connecting address). Screenshots in both languages land in test-results/.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../web/src/lib/format.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { mailedCode } from '../helpers/browser.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { seed } from '../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { ensureBuilt, launchChromium, resultsDir } from './identity-browser.ts';
import { seedLedger, seedOrders } from './ledger-fixture.ts';

let testApp: TestApp;
let upstream: ScriptedUpstream;
let cleanup: () => Promise<void>;
let database: TestDatabase;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  upstream = await startScriptedUpstream();
  const mode = await realMode();
  cleanup = mode.cleanup;
  database = mode.database;
  testApp = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await upstream?.close();
  await cleanup?.();
});

/** A browser whose language is `locale` (navigator.languages and Accept-Language), problems collected. */
async function openBrowser(locale: string): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: testApp.url, locale });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return { page, context, problems };
}

/**
 * Latin words a Chinese page may show: product and brand names, protocol and tool names, units and codes.
 * Everything else written in Latin letters is an English UI string that escaped translation.
 */
const allowedWords = new Set([
  'svc', 'Pro', 'Max', 'x5', 'x20', 'OpenAI', 'API', 'SDK', 'ID', 'JSON', 'RFC', 'Node', 'Node.js', 'Python', 'npm', 'pip', 'openai', 'curl',
  'Chat', 'Completions', 'Markdown', 'tokens', 'token', 'USD', 'CNY', 'UTC', 'Bearer', 'HTTP', 'IP', 'Chrome', 'Linux', 'English',
  'MCP', 'Streamable', 'REST', 'Schema', 'ISO', 'Claude', 'Code', 'Cursor', 'VS', 'Codex', 'OAuth',
  // Payment brands, named as they name themselves (the order lookup's placeholder, the card option's note).
  'Stripe', 'Visa', 'Mastercard',
  // Network terms Chinese documentation writes in Latin letters (enterprise allow-lists).
  'CIDR',
]);
const allowedPatterns = [
  /^svc[-_][\w.-]*$/, // model ids (svc-2.1-fast), key prefixes (svc_live_), client names (svc-cli)
  /^[\w.+-]+@example\.com$/, // the test's email addresses
  /^mbr_[\w-]*$/, // request ids and their prefix (the staff search box's placeholder)
  /^[A-Z]{4}-[A-Z]{4}$/, // device user codes
  /^web_search$/,
  /^svc\.search\.v1$/, // the search output form name
];

/** English left on the page: text nodes and the attributes people hear or see (title, aria-label, placeholder). */
async function englishLeftovers(page: Page): Promise<string[]> {
  const texts = await page.evaluate(() => {
    // Code samples and the language switch (each language named in itself) are not UI text.
    const skip = (element: Element | null) => Boolean(element?.closest('code, pre, script, style, noscript, .language-switch'));
    const found: string[] = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!skip(node.parentElement) && node.textContent?.trim()) found.push(node.textContent);
    }
    for (const element of document.body.querySelectorAll('[title], [aria-label], [placeholder], [alt], [aria-valuetext]')) {
      if (skip(element)) continue;
      for (const name of ['title', 'aria-label', 'placeholder', 'alt', 'aria-valuetext']) {
        const value = element.getAttribute(name);
        if (value) found.push(value);
      }
    }
    return found;
  });
  const words = texts.flatMap((text) => text.match(/[A-Za-z][\w.@+-]*[\w]|[A-Za-z]/g) ?? []);
  return [...new Set(words.filter((word) => !allowedWords.has(word) && !allowedPatterns.some((pattern) => pattern.test(word))))];
}

async function expectChinese(page: Page, name: string): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.lang), `${name}: <html lang>`).toBe('zh-CN');
  expect(await englishLeftovers(page), `${name}: English UI strings`).toEqual([]);
  await page.screenshot({ path: resolve(resultsDir, `i18n-zh-${name}.png`), fullPage: true });
}

const graphqlMe = (page: Page) =>
  page.evaluate(async () => {
    const response = await fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { email locale } }' }) });
    return ((await response.json()) as { data: { me: { email: string; locale: string | null } | null } }).data.me;
  });

describe('Chinese web app', () => {
  it('renders every page in Chinese for a zh-CN browser, then keeps English once the member picks it', async () => {
    const email = `e2e-zh-${Date.now()}@example.com`;
    const password = 'a long enough password';
    const { page, context, problems } = await openBrowser('zh-CN');
    try {
      // The server answers in Chinese before any script runs.
      const first = await page.goto('/');
      expect(await first!.text()).toContain('<html lang="zh-CN"');
      await page.locator('.plan-teaser__name').first().waitFor();
      expect(await page.locator('h1').innerText()).toContain('一套 API');
      expect(await page.locator('.plan-teaser__name').allInnerTexts()).toEqual(['免费版', 'Pro', 'Max']);
      // Money through Intl: the catalogue's USD prices keep their ISO code; "from … / month" is Chinese.
      expect(await page.locator('.plan-teaser__price').allInnerTexts()).toEqual(['USD\u00a00.00/月', 'USD\u00a09.00/月', 'USD\u00a019.00/月起']);
      await expectChinese(page, 'home');

      await page.goto('/pricing');
      await page.locator('tr[data-model]').first().waitFor();
      await page.locator('.bar').first().waitFor();
      expect(await page.locator('[data-plan="pro"] .plan-card__rate').innerText()).toBe('每分钟 600 次请求');
      expect(await page.locator('tr[data-model="auto"] .use').innerText()).toBe('大批量调用与工具调用；实际调用 svc-2.1-fast');
      await expectChinese(page, 'pricing');

      await page.goto('/docs');
      await page.getByRole('heading', { level: 1, name: '快速开始' }).waitFor();
      // The samples' prompts are in Chinese too, still valid code.
      expect(await page.locator('pre').nth(1).innerText()).toContain('"用一句话打个招呼。"');
      await expectChinese(page, 'docs');

      await page.goto('/docs/search');
      await page.getByRole('heading', { level: 1, name: '网页搜索' }).waitFor();
      // The sample query is Chinese too, inside valid code; the MCP address is this server's.
      expect(await page.locator('pre').first().innerText()).toContain('"PostgreSQL 最新版本发布说明"');
      expect(await page.locator('pre').nth(2).innerText()).toContain(`${testApp.url}/v1/mcp`);
      await expectChinese(page, 'docs-search');

      await page.goto('/account');
      await page.getByRole('tab', { name: '注册' }).waitFor();
      await expectChinese(page, 'account-signed-out');
      // A server error arrives in Chinese (GraphQL extensions.messageZh).
      await page.getByLabel('邮箱', { exact: true }).fill(email);
      await page.getByLabel(/^密码/).fill(password);
      await page.getByRole('button', { name: '登录', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: '邮箱或密码不正确。' }).waitFor();
      await page.getByRole('tab', { name: '注册' }).click();
      await page.getByLabel('邮箱', { exact: true }).fill(email);
      await page.getByLabel(/^密码/).fill('short');
      await page.getByLabel(/^密码/).evaluate((input: HTMLInputElement) => input.removeAttribute('minlength'));
      await page.getByRole('button', { name: '注册', exact: true }).click();
      // With the server's own numbers: the template filled both languages from one value.
      await page.getByRole('alert').filter({ hasText: '密码至少需要 8 个字符。' }).waitFor();
      await page.getByLabel(/^密码/).fill(password);
      await page.getByRole('button', { name: '注册', exact: true }).click();
      // Sign-up emails a code first (the same answer whether or not the address has an account); the code creates it.
      await page.getByLabel('6 位验证码').waitFor({ timeout: 10_000 });
      await expectChinese(page, 'account-sign-up-code');
      await page.getByLabel('6 位验证码').fill(mailedCode(testApp.url, email));
      await page.getByRole('button', { name: '确认并创建账户' }).click();
      await page.getByTestId('account-email').waitFor();
      await page.getByLabel('密钥名称').fill('笔记本');
      await page.getByRole('button', { name: '创建密钥' }).click();
      const token = (await page.getByTestId('new-key-token').textContent())!.trim();
      await page.getByRole('button', { name: '我已复制' }).click();
      await page.locator('.data-table').first().waitFor();
      await expectChinese(page, 'account');

      const client = new OpenAI({ apiKey: token, baseURL: `${testApp.url}/v1`, maxRetries: 0 });
      await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: '你好' }] });
      await page.getByRole('navigation', { name: '主导航' }).getByRole('link', { name: '用量' }).click();
      await page.locator('[data-request-id]').first().waitFor();
      await page.getByRole('status').filter({ hasText: '实时' }).waitFor();
      await expect.poll(() => page.locator('[role="meter"]').count()).toBe(6);
      expect(await page.locator('[data-pool="fast-day"] .gauge__meta').innerText()).toMatch(/\d+(小时|分钟)|不到一分钟/); // the last minute before 00:00 UTC reads "in under a minute"
      await expectChinese(page, 'usage');
      // A request's own page: its story in Chinese.
      await page.locator('[data-request-id] a.request-link').first().click();
      await page.getByTestId('request-summary').waitFor();
      await expectChinese(page, 'usage-request');

      const started = await (await fetch(`${testApp.url}/api/membership/auth/device/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client: 'svc-cli' }) })).json() as { verification_uri_complete: string; user_code: string };
      const device = new URL(started.verification_uri_complete);
      await page.goto(`${device.pathname}${device.search}`);
      await page.getByTestId('device-card').waitFor();
      await expectChinese(page, 'device');
      await page.getByRole('button', { name: '批准' }).click();
      await page.getByText('已批准。您可以关闭此页面').waitFor();

      // An MCP client's OAuth consent page; its redirect URI is this server's home page.
      const registered = (await (await fetch(`${testApp.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'svc-mcp-client', redirect_uris: [`${testApp.url}/`] }) })).json()) as { client_id: string };
      const challenge = createHash('sha256').update('v'.repeat(43)).digest('base64url');
      await page.goto(`/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: registered.client_id, redirect_uri: `${testApp.url}/`, code_challenge: challenge, code_challenge_method: 'S256' })}`);
      await page.getByTestId('oauth-card').waitFor();
      await expectChinese(page, 'oauth-consent');
      await page.getByRole('button', { name: '拒绝' }).click();
      await page.waitForURL(/error=access_denied/);

      await page.goto('/enterprise/apply');
      await page.getByRole('heading', { level: 1, name: '申请组织账户' }).waitFor();
      await page.getByRole('button', { name: '提交申请' }).click();
      await page.getByText('请选择商业版或企业版。').waitFor();
      await expectChinese(page, 'enterprise-apply');
      await page.goto('/enterprise/console');
      await page.getByText('您还没有加入任何组织。').waitFor();
      await expectChinese(page, 'enterprise-console-none');
      await page.goto('/docs/enterprise');
      await page.getByRole('heading', { level: 1, name: '企业组织' }).waitFor();
      await expectChinese(page, 'docs-enterprise');
      // The server only answers page routes; an unknown path is the app's own 404, reached in the app.
      await page.evaluate(() => {
        window.history.pushState({}, '', '/no-such-page');
        window.dispatchEvent(new PopStateEvent('popstate'));
      });
      await page.getByRole('heading', { level: 1, name: '页面不存在' }).waitFor();
      await expectChinese(page, 'not-found');

      // The member picks English: the page switches at once, the account stores it, a reload keeps it.
      await page.goto('/account');
      await page.getByTestId('account-email').waitFor();
      expect((await graphqlMe(page))?.locale).toBe(null);
      await page.getByLabel('语言').selectOption('en');
      await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
      await expect.poll(async () => (await graphqlMe(page))?.locale).toBe('en');
      const reloaded = await page.reload();
      expect(await reloaded!.text()).toContain('<html lang="en"');
      await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
      await page.getByRole('button', { name: 'Create key' }).waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'i18n-en-account.png'), fullPage: true });
      for (const [path, name, ready] of [
        ['/account/usage', 'usage', '[data-request-id]'],
        ['/pricing', 'pricing', 'tr[data-model]'],
        ['/', 'home', '.plan-teaser__name'],
      ] as const) {
        await page.goto(path);
        await page.locator(ready).first().waitFor();
        expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
        await page.screenshot({ path: resolve(resultsDir, `i18n-en-${name}.png`), fullPage: true });
      }
      expect(await page.locator('.plan-teaser__name').allInnerTexts()).toEqual(['Free', 'Pro', 'Max']);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }

    // Another browser, still set to Chinese: once the member signs in, their account's English wins.
    const other = await openBrowser('zh-CN');
    try {
      await other.page.goto('/account');
      await other.page.getByRole('heading', { level: 1, name: '账户' }).waitFor();
      await other.page.getByLabel('邮箱', { exact: true }).fill(email);
      await other.page.getByLabel(/^密码/).fill(password);
      await other.page.getByRole('button', { name: '登录', exact: true }).click();
      await other.page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
      expect(await other.page.evaluate(() => document.documentElement.lang)).toBe('en');
      expect(other.problems).toEqual([]);
    } finally {
      await other.context.close();
    }
  });

  it('renders the admin app in Chinese for support staff: dashboard, accounts, an account and the audit log', async () => {
    const people = seed(testApp);
    const support = await people.staff('support', 'zh-support');
    const member = await people.member({ tag: 'zh-member' });
    const { client } = await member.withKey('笔记本');
    const { _request_id: requestId } = await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: '你好' }] });
    await seedLedger(database, [member.id, (await people.member({ tag: 'zh-other' })).id]);
    await seedOrders(database, member.id);
    const { page, context, problems } = await openBrowser('zh-CN');
    const nav = () => page.getByRole('navigation', { name: '管理后台导航' });
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: support.web.cookie!, url: testApp.url }]);
      await page.goto('/admin');
      await page.getByRole('heading', { level: 1, name: '概览' }).waitFor();
      await page.getByRole('img', { name: /^每日请求数：最高 / }).waitFor();
      expect(await page.locator('.segmented__option').allInnerTexts()).toEqual(['7 天', '30 天', '90 天']);
      // Figures through Intl in Chinese: grouped counts, 万 for tens of thousands, money with its ISO code.
      const totals = (await testApp.app.services.stats.stats(
        { accountId: support.id, email: support.email, role: 'support', payer: { kind: 'account', id: support.id, package: 'free' }, credential: { kind: 'web_session', id: 'x' } },
        'last_30_days',
      )).totals;
      const tile = (label: string) => page.locator('.tile').filter({ has: page.locator('.tile__label', { hasText: new RegExp(`^${label}$`) }) });
      expect(await tile('请求数').locator('.tile__value').innerText()).toBe(new Intl.NumberFormat('zh-CN').format(totals.requests));
      expect(await tile('输入 tokens').locator('.tile__value').innerText()).toMatch(/^\d+(\.\d)?万$/);
      expect(await tile('费用').locator('.tile__note').innerText()).toBe(`计入额度 ${formatMoney(totals.spend, 'zh-CN')}`);
      // Revenue in two currencies: the reader's own (CNY) by its symbol, the other by its ISO code.
      expect(await tile('收入').locator('.tile__value').innerText()).toBe(`¥130.00\nUSD${'\u00a0'}9.00`);
      expect(await tile('收入').locator('.tile__note').innerText()).toBe(`已付 2 笔，退款 ¥65.00\n已付 1 笔，退款 USD${'\u00a0'}0.00`);
      expect(await page.locator('.chart__x').first().textContent()).toMatch(/^\d{1,2}月\d{1,2}日$/);
      await page.locator('.chart').first().locator('.chart__hit').nth(20).hover();
      await page.locator('.chart__tooltip').filter({ hasText: /^\d{1,2}月\d{1,2}日周[一二三四五六日]/ }).waitFor();
      await expectChinese(page, 'admin-dashboard');

      await nav().getByRole('link', { name: '账户' }).click();
      await page.getByRole('heading', { level: 1, name: '账户' }).waitFor();
      await page.getByRole('link', { name: member.email }).waitFor();
      await expectChinese(page, 'admin-accounts');
      // The search box: every account at a domain, then a request's story by its id.
      await page.goto('/admin/accounts?q=%40example.com');
      await page.locator('.search-hit').first().waitFor();
      await expectChinese(page, 'admin-search');
      await page.goto(`/admin/accounts?q=${requestId}`);
      await page.waitForURL(`**/admin/requests/${requestId}`);
      await page.getByTestId('request-payer').waitFor();
      await expectChinese(page, 'admin-request');
      await page.goto('/admin/accounts');
      await page.getByRole('link', { name: member.email }).waitFor();

      await page.getByRole('link', { name: member.email }).click();
      await page.getByRole('heading', { level: 1, name: member.email }).waitFor();
      await page.locator('[data-request-id]').first().waitFor();
      await expect.poll(() => page.locator('[role="meter"]').count()).toBe(6);
      // A staff action in Chinese: the missing reason, then the change said on the page.
      await page.getByRole('button', { name: '更改套餐' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('套餐').selectOption('pro');
      await dialog.getByRole('button', { name: '更改套餐' }).click();
      await dialog.getByText('请填写原因，它会连同您的名字记入审计日志。').waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'i18n-zh-admin-package-dialog.png') });
      await dialog.getByLabel(/^原因/).fill('大会讲者，销售已同意');
      await dialog.getByRole('button', { name: '更改套餐' }).click();
      await page.getByRole('status').filter({ hasText: '套餐已改为 pro。' }).waitFor();
      await expect.poll(() => page.locator('.audit-table tbody tr').count()).toBe(1);
      expect(await page.locator('.audit-table tbody tr').first().innerText()).toMatch(/更改套餐[\s\S]*大会讲者，销售已同意[\s\S]*套餐\s*免费版\s*→\s*Pro/);
      await page.getByRole('link', { name: '在审计日志中查看' }).waitFor();
      await expectChinese(page, 'admin-account');

      const seeded = (await database.query(`select id from billing_order where account_id = $1 and state = 'refunded'`, [member.id])).rows[0] as { id: string };
      await nav().getByRole('link', { name: '订单' }).click();
      await page.getByRole('heading', { level: 1, name: '订单' }).waitFor();
      await expectChinese(page, 'admin-orders');
      await page.goto(`/admin/orders/${seeded.id}`);
      await page.locator(`[data-order="${seeded.id}"]`).waitFor();
      await page.locator('.admin-section .state, .admin-section .audit-table').first().waitFor();
      // The owner's link shows the account id until the owner's email has loaded: wait for the email.
      await page.getByRole('link', { name: member.email }).waitFor();
      await expectChinese(page, 'admin-order');

      await nav().getByRole('link', { name: '审计日志' }).click();
      await page.getByRole('heading', { level: 1, name: '审计日志' }).waitFor();
      await page.locator('.audit-table tbody tr').first().waitFor();
      await page.getByRole('combobox', { name: /^操作/ }).selectOption('account:set-package');
      await page.getByRole('button', { name: '筛选' }).click();
      await page.waitForURL('**/admin/audit?action=account%3Aset-package');
      await expect.poll(() => page.locator('.audit-table tbody tr').count()).toBe(1);
      await expectChinese(page, 'admin-audit');

      // The same pages in English, for comparison: the switch in the admin bar stores the choice.
      await page.getByLabel('语言').selectOption('en');
      await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
      await page.screenshot({ path: resolve(resultsDir, 'i18n-en-admin-audit.png'), fullPage: true });
      for (const [path, name, ready] of [
        ['/admin', 'dashboard', '.chart svg'],
        ['/admin/accounts', 'accounts', '.admin-table tbody tr'],
        [`/admin/accounts/${member.id}`, 'account', '.audit-table tbody tr'],
      ] as const) {
        await page.goto(path);
        await page.locator(ready).first().waitFor();
        expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
        await page.screenshot({ path: resolve(resultsDir, `i18n-en-admin-${name}.png`), fullPage: true });
      }
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('renders the enterprise pages in Chinese: a pending application, the review queue and its detail, then the approved page and the console with a key and its address', async () => {
    const people = seed(testApp);
    const support = await people.staff('support', 'zh-reviewer');
    const member = await people.member({ tag: 'zh-applicant' });
    const organisation = `研究所 ${Date.now()}`;
    const submitted = await member.web.graphql<{ submitEnterpriseApplication: { id: string; state: string } }>(
      'mutation($input: EnterpriseApplicationInput!) { submitEnterpriseApplication(input: $input) { id state } }',
      { input: { kind: 'enterprise', organisation, contactEmail: member.email, website: null, country: 'CN', useCase: '为 40 位研究人员总结实验记录，主要使用快速模型。', expectedMonthlyTokens: 50_000_000 } },
    );
    expect(submitted.errors).toBeUndefined();
    const applicationId = submitted.data!.submitEnterpriseApplication.id;
    const applicant = await openBrowser('zh-CN');
    const reviewer = await openBrowser('zh-CN');
    try {
      await applicant.context.addCookies([{ name: 'svc_membership_session', value: member.web.cookie!, url: testApp.url }]);
      await reviewer.context.addCookies([{ name: 'svc_membership_session', value: support.web.cookie!, url: testApp.url }]);
      await applicant.page.goto('/enterprise/apply');
      await applicant.page.getByText('我们正在审核您的申请。').waitFor();
      await expectChinese(applicant.page, 'enterprise-pending');

      await reviewer.page.goto('/admin/applications');
      await reviewer.page.locator('tr', { hasText: organisation }).waitFor();
      await expectChinese(reviewer.page, 'admin-applications');
      await reviewer.page.goto(`/admin/applications/${applicationId}`);
      await reviewer.page.getByRole('heading', { level: 1, name: organisation }).waitFor();
      await expectChinese(reviewer.page, 'admin-application');
      await reviewer.page.getByRole('button', { name: '拒绝' }).click();
      await reviewer.page.getByRole('dialog').getByRole('button', { name: '拒绝' }).click();
      await reviewer.page.getByText('请填写原因：申请人会看到，并会记入审计日志。').waitFor();
      await reviewer.page.screenshot({ path: resolve(resultsDir, 'i18n-zh-admin-application-reject.png') });
      await reviewer.page.getByRole('dialog').getByRole('button', { name: '取消' }).click();
      await reviewer.page.getByRole('button', { name: '批准' }).click();
      await reviewer.page.getByRole('dialog').getByLabel(/^给申请人的备注/).fill('欢迎加入，已为您开通企业版套餐。');
      await reviewer.page.getByRole('dialog').getByRole('button', { name: '批准' }).click();
      await reviewer.page.getByRole('status').filter({ hasText: '已批准' }).waitFor();
      await expectChinese(reviewer.page, 'admin-application-approved');
      const approved = await support.web.graphql<{ enterpriseApplication: { organisationId: string } }>('query($id: ID!) { enterpriseApplication(id: $id) { organisationId } }', { id: applicationId });
      await reviewer.page.goto(`/admin/accounts/${approved.data!.enterpriseApplication.organisationId}`);
      await reviewer.page.getByRole('heading', { level: 1, name: organisation }).waitFor();
      await reviewer.page.getByRole('region', { name: '成员' }).locator('tr', { hasText: member.email }).waitFor();
      await expectChinese(reviewer.page, 'admin-organisation-account');
      await reviewer.page.goBack();

      // The applicant's page turns by itself, then the console mints a key that a script uses.
      await applicant.page.getByText('已批准：您的组织已就绪。').waitFor({ timeout: 10_000 });
      await expectChinese(applicant.page, 'enterprise-approved');
      await applicant.page.getByRole('link', { name: '打开控制台' }).click();
      await applicant.page.getByRole('heading', { level: 2, name: organisation }).waitFor();
      await applicant.page.getByLabel('密钥名称').fill('实验室');
      await applicant.page.getByRole('button', { name: '创建密钥' }).click();
      const token = (await applicant.page.getByTestId('new-org-key-token').textContent())!.trim();
      const client = new OpenAI({ apiKey: token, baseURL: `${testApp.url}/v1`, maxRetries: 0 });
      await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: '你好' }] });
      await applicant.page.locator('tr[data-ip]').waitFor({ timeout: 10_000 });
      await applicant.page.locator('[data-request-id]').first().waitFor({ timeout: 10_000 });
      await expectChinese(applicant.page, 'enterprise-console');

      // The same pages in English, for comparison.
      await applicant.page.getByLabel('语言').selectOption('en');
      await applicant.page.getByRole('heading', { level: 1, name: 'Organisation console' }).waitFor();
      await applicant.page.screenshot({ path: resolve(resultsDir, 'i18n-en-enterprise-console.png'), fullPage: true });
      await reviewer.page.getByLabel('语言').selectOption('en');
      await reviewer.page.getByRole('heading', { level: 2, name: 'Timeline' }).waitFor();
      await reviewer.page.screenshot({ path: resolve(resultsDir, 'i18n-en-admin-application-approved.png'), fullPage: true });
      expect(applicant.problems).toEqual([]);
      expect(reviewer.problems).toEqual([]);
    } finally {
      await applicant.context.close();
      await reviewer.context.close();
    }
  });

  it('keeps a signed-out choice of language across a reload (cookie)', async () => {
    const { page, context, problems } = await openBrowser('zh-CN');
    try {
      await page.goto('/pricing');
      await page.getByRole('heading', { level: 1, name: '价格' }).waitFor();
      await page.getByLabel('语言').selectOption('en');
      await page.getByRole('heading', { level: 1, name: 'Pricing' }).waitFor();
      const reloaded = await page.reload();
      expect(await reloaded!.text()).toContain('<html lang="en"');
      await page.getByRole('heading', { level: 1, name: 'Pricing' }).waitFor();
      await page.getByLabel('Language').selectOption('zh-CN');
      await page.getByRole('heading', { level: 1, name: '价格' }).waitFor();
      await page.reload();
      await page.getByRole('heading', { level: 1, name: '价格' }).waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('fits a phone screen in Chinese, language switch included', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, baseURL: testApp.url, locale: 'zh-CN' });
    try {
      const page = await context.newPage();
      await page.goto('/pricing');
      await page.locator('tr[data-model]').first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBe(0);
      const header = await page.locator('.site-header').boundingBox();
      const switcher = await page.locator('.language-switch').boundingBox();
      expect(switcher && header && switcher.y + switcher.height <= header.y + header.height).toBe(true);
      await page.screenshot({ path: resolve(resultsDir, 'i18n-zh-pricing-mobile.png') });
    } finally {
      await context.close();
    }
  });

  // Last, so the payment it makes does not move the dashboard's revenue figures checked above.
  it('renders upgrading, checkout, billing and a receipt in Chinese', async () => {
    const member = await seed(testApp).member({ tag: 'zh-buyer' });
    const { page, context, problems } = await openBrowser('zh-CN');
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: member.web.cookie!, url: testApp.url }]);
      await page.goto('/account');
      await page.getByTestId('account-plan').locator('.plan-option').first().waitFor();
      await expectChinese(page, 'account-plan');
      await page.goto('/pricing');
      await page.locator('.plan-card[data-plan="pro"] [data-upgrade="pro"]').click();
      await page.getByRole('dialog').locator('.pay-option').first().waitFor();
      await expectChinese(page, 'upgrade-dialog');
      await page.getByRole('dialog').locator('.pay-option[data-currency="CNY"]').click();
      await page.getByRole('dialog').getByRole('button', { name: '去付款' }).click();
      await page.waitForURL(/\/checkout\//);
      const orderId = page.url().split('/').pop()!;
      await page.locator('[data-live="live"]').waitFor();
      await expectChinese(page, 'checkout');
      await page.getByRole('button', { name: '支付 ¥65.00' }).click();
      await page.getByRole('heading', { name: '已收到付款' }).waitFor();
      await expectChinese(page, 'checkout-paid');
      await page.goto('/account/billing');
      await page.locator(`tr[data-order="${orderId}"]`).waitFor();
      await page.getByTestId('period-end').waitFor();
      await expectChinese(page, 'billing');
      await page.goto(`/account/billing/orders/${orderId}`);
      await page.locator('.order-summary').waitFor();
      await expectChinese(page, 'receipt');
      // Before the plan catalogue has arrived, the package is named by the built-in Chinese catalogue, not its id.
      const heldPlans: Route[] = [];
      await page.route('**/graphql', (route) => (route.request().postData()?.includes('query Plans') ? void heldPlans.push(route) : route.continue()));
      await page.reload();
      await page.locator('.order-summary').waitFor();
      // The summary may render before the catalogue's request leaves: wait for it to be held.
      await expect.poll(() => heldPlans.length).toBeGreaterThan(0);
      await expect.poll(() => page.locator('.order-summary h2').textContent()).toBe('Pro，一个月');
      await page.goto('/account');
      await page.getByTestId('account-email').waitFor();
      expect(await englishLeftovers(page), 'account before the catalogue: English UI strings').toEqual([]);
      await page.unroute('**/graphql');
      // The held requests' pages are gone; only the release matters.
      for (const route of heldPlans) await route.continue().catch(() => undefined);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

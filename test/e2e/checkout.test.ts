/**
 * Checkout in Chromium against the real app (PostgreSQL + Redis) with the sandbox provider, which is on by
 * default when no real provider is configured: a Free member opens /account/usage in one tab, goes to
 * /pricing in another, upgrades to Pro, pays in the sandbox, and both tabs move to Pro without a reload —
 * the checkout page through `orderUpdated`, the usage page's pools through `usageUpdated`. The billing page
 * then shows the period and the paid order with its receipt. In Chinese: a failed payment, a retry that
 * pays, and an admin who finds the order and refunds it with a reason. Screenshots in both languages go to
 * test-results/checkout-*.png. With real providers configured (local fakes that sign like Alipay, WeChat Pay
 * and Stripe): every provider is offered in its currency, WeChat Pay's code_url is drawn as a QR code, and its
 * signed notice turns the page paid.
 */
import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawNotification } from '../../server/modules/billing/providers/provider.ts';
import { startAlipayFake } from '../fixtures/alipay-fake.ts';
import { startStripeFake } from '../fixtures/stripe-fake.ts';
import { startWechatFake } from '../fixtures/wechat-fake.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';
import { ensureBuilt, launchChromium, resultsDir } from './identity-browser.ts';

let testApp: TestApp;
let mode: Awaited<ReturnType<typeof realMode>>;
let cleanup: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  mode = await realMode();
  cleanup = mode.cleanup;
  testApp = await startApp(mode.config);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await cleanup?.();
});

const shot = (page: Page, name: string) => page.screenshot({ path: resolve(resultsDir, `checkout-${name}.png`), fullPage: true });

/** A signed-in browser in `locale`; pages opened in it collect their problems. */
async function signedIn(cookie: string, locale: string): Promise<{ context: BrowserContext; open(): Promise<Page>; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: testApp.url, locale });
  await context.addCookies([{ name: 'svc_membership_session', value: cookie, url: testApp.url }]);
  const problems: string[] = [];
  return {
    context,
    problems,
    open: async () => {
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
      });
      return page;
    },
  };
}

/** Marks the page; `notReloaded(page)` is true only while the same document is shown. */
const markPage = (page: Page) => page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
const notReloaded = (page: Page) => page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true);

function poolLimit(packageId: string, cls: 'fast' | 'premium', window: 'day' | 'week' | 'month'): number {
  for (const plan of testApp.app.services.plans.list()) {
    const pkg = plan.packages.find((candidate) => candidate.id === packageId);
    const pool = pkg?.pools.find((candidate) => candidate.class === cls && candidate.window === window);
    if (pool) return pool.limit.amountMicros;
  }
  throw new Error(`no ${cls}-${window} pool for ${packageId}`);
}

describe('checkout', () => {
  it('a Free member upgrades to Pro in the sandbox: the checkout page and the open usage page turn Pro without a reload', async () => {
    const member = await seed(testApp).member({ tag: 'e2e-upgrade' });
    const browserSession = await signedIn(member.web.cookie!, 'en-US');
    try {
      // The usage page, opened first in its own tab, shows Free's pools.
      const usage = await browserSession.open();
      await usage.goto('/account/usage');
      await usage.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      const premiumDay = usage.locator('[data-pool="premium-day"] [role="meter"]');
      await expect.poll(() => premiumDay.getAttribute('aria-valuemax')).toBe(String(poolLimit('free', 'premium', 'day')));
      await markPage(usage);

      const page = await browserSession.open();
      await page.goto('/pricing');
      const pro = page.locator('.plan-card[data-plan="pro"]');
      // Prices in each currency, with the currency named.
      expect(await pro.locator('.price__amount').innerText()).toBe('USD\u00a09.00');
      expect(await pro.getByTestId('other-prices').innerText()).toBe('or CNY\u00a065.00');
      await shot(page, 'en-pricing');
      await pro.getByRole('button', { name: 'Upgrade to Pro' }).click();
      const dialog = page.getByRole('dialog', { name: 'Upgrade to Pro' });
      await dialog.locator('.pay-option').first().waitFor();
      // Only the sandbox is on here (no real provider configured), in each currency Pro has a price in.
      expect(await dialog.locator('.pay-option').evaluateAll((options) => options.map((o) => `${o.getAttribute('data-provider')} ${o.getAttribute('data-currency')}`))).toEqual([
        'sandbox USD',
        'sandbox CNY',
      ]);
      await page.screenshot({ path: resolve(resultsDir, 'checkout-en-dialog.png') });
      await dialog.locator('.pay-option[data-currency="USD"]').click();
      await dialog.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(/\/checkout\/svc[A-Za-z0-9]{24}$/);
      const orderId = page.url().split('/').pop()!;
      await page.getByRole('heading', { name: 'Sandbox payment' }).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('Awaiting payment');
      expect(await page.getByTestId('order-amount').innerText()).toBe('USD\u00a09.00');
      await page.locator('[data-live="live"]').waitFor();
      await shot(page, 'en-pay');
      await markPage(page);

      await page.getByRole('button', { name: 'Pay USD\u00a09.00' }).click();
      await page.getByRole('heading', { name: 'Payment received' }).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('Paid');
      expect(await page.getByTestId('checkout-outcome').innerText()).toContain('You are on Pro now');
      expect(await notReloaded(page)).toBe(true);
      await shot(page, 'en-paid');

      // The other tab follows: Pro's pools, no reload.
      await expect.poll(() => premiumDay.getAttribute('aria-valuemax'), { timeout: 15_000 }).toBe(String(poolLimit('pro', 'premium', 'day')));
      expect(await usage.locator('[data-pool="fast-month"] [role="meter"]').getAttribute('aria-valuemax')).toBe(String(poolLimit('pro', 'fast', 'month')));
      expect(await notReloaded(usage)).toBe(true);
      await shot(usage, 'en-usage-pro');

      // Billing: the period and the paid order, whose receipt opens.
      await page.getByRole('link', { name: 'Billing and receipts' }).click();
      await page.getByTestId('current-period').waitFor();
      expect(await page.getByTestId('current-package').innerText()).toBe('Pro');
      await page.getByTestId('period-end').waitFor();
      const row = page.locator(`tr[data-order="${orderId}"]`);
      expect(await row.innerText()).toMatch(/Pro\s+Sandbox\s+USD\u00a09\.00\s+Paid\s+Receipt/);
      await shot(page, 'en-billing');
      await row.getByRole('link', { name: 'Receipt' }).click();
      await page.getByRole('heading', { level: 1, name: 'Receipt' }).waitFor();
      expect(await page.locator('.order-summary').innerText()).toContain(orderId);
      await shot(page, 'en-receipt');

      // Nothing renews by itself: the page says when it ends, and offers nothing to cancel.
      await page.goto('/account/billing');
      const ends = page.getByTestId('period-ends');
      await ends.waitFor();
      expect(await ends.innerText()).toMatch(/^Ends on .+, won't renew\.\s+To keep Pro, renew it before then; otherwise you return to Free\.$/);
      expect(await page.getByRole('button', { name: /cancel/i }).count()).toBe(0);
      await shot(page, 'en-billing-ends');
      expect(browserSession.problems).toEqual([]);
    } finally {
      await browserSession.context.close();
    }
  });

  it('in Chinese: a failed sandbox payment says so and a retry pays; an admin finds the order and refunds it', async () => {
    const people = seed(testApp);
    const member = await people.member({ tag: 'e2e-zh-upgrade' });
    const admin = await people.staff('admin', 'e2e-zh-admin');
    const zh = await signedIn(member.web.cookie!, 'zh-CN');
    let orderId: string;
    try {
      const page = await zh.open();
      await page.goto('/account');
      const plan = page.getByTestId('account-plan');
      await plan.locator('[data-package="max_x5"]').waitFor();
      await shot(page, 'zh-account');
      await plan.locator('[data-package="max_x5"]').getByRole('button', { name: '升级到 Max x5' }).click();
      const dialog = page.getByRole('dialog', { name: '升级到 Max x5' });
      await dialog.locator('.pay-option[data-currency="CNY"]').click();
      expect(await dialog.locator('.pay-option[data-currency="CNY"] .pay-option__price').innerText()).toBe('¥138.00');
      await dialog.getByRole('button', { name: '去付款' }).click();
      await page.getByRole('heading', { name: '沙盒付款' }).waitFor();
      await page.locator('[data-live="live"]').waitFor();
      await shot(page, 'zh-pay');
      await page.getByRole('button', { name: '模拟付款失败' }).click();
      await page.getByRole('heading', { name: '付款未成功' }).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('付款失败');
      await shot(page, 'zh-failed');
      const failedId = page.url().split('/').pop()!;

      await page.getByRole('button', { name: '重试' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/checkout/') && !url.pathname.endsWith(failedId));
      orderId = page.url().split('/').pop()!;
      await page.getByRole('button', { name: '支付 ¥138.00' }).click();
      await page.getByRole('heading', { name: '已收到付款' }).waitFor();
      await shot(page, 'zh-paid');

      await page.goto('/account/billing');
      await page.locator(`tr[data-order="${orderId}"]`).waitFor();
      expect(await page.locator(`tr[data-order="${failedId}"]`).innerText()).toContain('付款失败');
      await shot(page, 'zh-billing');
      expect(zh.problems).toEqual([]);
    } finally {
      await zh.context.close();
    }

    const staff = await signedIn(admin.web.cookie!, 'zh-CN');
    try {
      const page = await staff.open();
      await page.goto('/admin');
      await page.getByRole('navigation', { name: '管理后台导航' }).getByRole('link', { name: '订单' }).click();
      await page.getByRole('heading', { level: 1, name: '订单' }).waitFor();
      await page.getByRole('searchbox').fill(orderId);
      await page.getByRole('button', { name: '查找' }).click();
      await page.locator(`[data-order="${orderId}"]`).waitFor();
      expect(await page.getByTestId('order-amount').innerText()).toBe('¥138.00');
      await page.getByRole('button', { name: '重新向服务商查询' }).click();
      await page.getByRole('status').filter({ hasText: '没有变化：订单为“已付款”。' }).waitFor();
      await page.getByRole('button', { name: '退款' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: '退款' }).click();
      await dialog.getByText('请填写原因').waitFor();
      await dialog.getByLabel(/^原因/).fill('会员误购，已电话确认');
      await dialog.getByRole('button', { name: '退款' }).click();
      await page.getByRole('status').filter({ hasText: '已退款 ¥138.00。' }).waitFor();
      await expect.poll(() => page.getByTestId('order-state').innerText()).toBe('已退款');
      await expect.poll(() => page.locator('.audit-table tbody tr[data-action="order:refund"]').count()).toBe(1);
      expect(await page.locator('.audit-table tbody tr[data-action="order:refund"]').innerText()).toContain('会员误购，已电话确认');
      await shot(page, 'zh-admin-order');
      // The provider's trade number finds the same order.
      const tradeNo = (await page.locator('.facts > div').filter({ hasText: '服务商交易号' }).locator('code').innerText()).trim();
      expect(tradeNo).toMatch(/^sbx_[0-9a-f]{24}$/);
      await page.getByRole('searchbox').fill(tradeNo);
      await page.getByRole('button', { name: '查找' }).click();
      await page.waitForURL(`**/admin/orders?q=${tradeNo}`);
      await page.locator(`[data-order="${orderId}"]`).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('已退款');
      await page.getByLabel('语言').selectOption('en');
      await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
      await shot(page, 'en-admin-order');
      expect(staff.problems).toEqual([]);
    } finally {
      await staff.context.close();
    }
  });

  it('an unpaid order that expires says so on its open checkout page, and Try again opens a new one', async () => {
    const member = await seed(testApp).member({ tag: 'e2e-expire' });
    const session = await signedIn(member.web.cookie!, 'en-US');
    try {
      const page = await session.open();
      await page.goto('/pricing');
      await page.locator('.plan-card[data-plan="pro"] [data-upgrade="pro"]').click();
      await page.getByRole('dialog').getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(/\/checkout\//);
      const first = page.url().split('/').pop()!;
      await page.locator('[data-live="live"]').waitFor();
      await markPage(page);
      // The reconciliation job, run as if its two hours were up (once this instance holds the job's lease).
      const later = new Date(Date.now() + 3 * 3600_000);
      for (;;) {
        const run = await testApp.app.services.billingJobs.runOnce(later);
        if (run.reconcile) break;
      }
      await page.getByRole('heading', { name: 'This order expired' }).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('Expired');
      expect(await notReloaded(page)).toBe(true);
      await shot(page, 'en-expired');
      await page.getByRole('button', { name: 'Try again' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/checkout/') && !url.pathname.endsWith(first));
      await page.getByRole('heading', { name: 'Sandbox payment' }).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('Awaiting payment');
      // On a phone the summary and the payment stack, with nothing wider than the screen.
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
      await shot(page, 'en-phone');
      expect(session.problems).toEqual([]);
    } finally {
      await session.context.close();
    }
  });

  it('with real providers: each in its currency; WeChat Pay draws the code_url as a QR code and its signed notice turns the page paid', async () => {
    const [alipay, wechat, stripe] = await Promise.all([startAlipayFake(), startWechatFake(), startStripeFake()]);
    const [al, we, st] = [alipay.config(), wechat.config(), stripe.config()];
    const live = await startApp(mode.config, { config: { payments: { alipay: al.config, wechat: we.config, stripe: st.config } }, env: { ...al.env, ...we.env, ...st.env } });
    const member = await seed(live).member({ tag: 'e2e-wechat' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: live.url, locale: 'zh-CN' });
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: member.web.cookie!, url: live.url }]);
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      // Alipay and Stripe are redirects: the page offers the provider's own URL.
      for (const [provider, name] of [['alipay', '支付宝'], ['stripe', '银行卡']] as const) {
        await page.goto('/pricing');
        await page.locator('.plan-card[data-plan="max"] [data-upgrade="max_x5"]').click();
        const next = page.getByRole('dialog');
        await next.locator(`.pay-option[data-provider="${provider}"]`).first().click();
        await next.getByRole('button', { name: '去付款' }).click();
        await page.waitForURL(/\/checkout\//);
        const link = page.getByRole('link', { name: `前往${name}` });
        const href = (await link.getAttribute('href'))!;
        expect(href.startsWith(provider === 'alipay' ? `${alipay.gateway}?` : 'https://checkout.stripe.test/c/pay/cs_')).toBe(true);
        await shot(page, `zh-${provider}-redirect`);
      }
      await page.goto('/pricing');
      await page.locator('.plan-card[data-plan="pro"] [data-upgrade="pro"]').click();
      const dialog = page.getByRole('dialog', { name: '升级到 Pro' });
      await dialog.locator('.pay-option').first().waitFor();
      // The sandbox is off once a real provider is configured; Alipay and WeChat Pay charge CNY, cards any currency.
      expect(await dialog.locator('.pay-option').evaluateAll((options) => options.map((o) => `${o.getAttribute('data-provider')} ${o.getAttribute('data-currency')}`))).toEqual([
        'alipay CNY',
        'wechat CNY',
        'stripe USD',
        'stripe CNY',
      ]);
      expect(await dialog.locator('.pay-option[data-provider="wechat"] .pay-option__price').innerText()).toBe('¥65.00');
      expect(await dialog.locator('.pay-option[data-provider="stripe"][data-currency="USD"] .pay-option__price').innerText()).toBe('USD\u00a09.00');
      await page.screenshot({ path: resolve(resultsDir, 'checkout-zh-providers.png') });
      await dialog.locator('.pay-option[data-provider="wechat"]').click();
      await dialog.getByTestId('quote').filter({ hasText: '¥65.00' }).waitFor();
      await dialog.getByRole('button', { name: '去付款' }).click();
      await page.waitForURL(/\/checkout\//);
      const orderId = page.url().split('/').pop()!;
      const qr = page.getByRole('img', { name: '二维码：使用微信支付支付 ¥65.00' });
      await qr.waitFor();
      // The code drawn is the code_url WeChat Pay answered for this very order.
      const order = (await (await member.web.at(live.url).fetch(`/api/membership/orders/${orderId}`)).json()) as { order: { qrCode: string; amountMinor: number } };
      expect(order.order.qrCode).toMatch(/^weixin:\/\/wxpay\/bizpayurl\?pr=/);
      expect(await qr.getAttribute('data-value')).toBe(order.order.qrCode);
      expect((await qr.locator('path').getAttribute('d'))!.length).toBeGreaterThan(1000);
      const box = await qr.boundingBox();
      expect(box!.width).toBeGreaterThanOrEqual(200);
      await page.locator('[data-live="live"]').waitFor();
      await shot(page, 'zh-wechat-qr');
      await markPage(page);

      // WeChat Pay's signed, encrypted notice reaches the notify URL: the page turns paid by itself.
      const notice: RawNotification = wechat.notice(wechat.pay(orderId, order.order.amountMinor));
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(notice.headers)) if (typeof value === 'string') headers[name] = value;
      const ack = await fetch(`${live.url}/api/membership/payments/wechat/notify`, { method: 'POST', headers, body: new Uint8Array(notice.body) });
      expect(ack.status).toBe(204);
      await page.getByRole('heading', { name: '已收到付款' }).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('已付款');
      expect(await notReloaded(page)).toBe(true);
      await shot(page, 'zh-wechat-paid');

      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await live.close();
      await Promise.allSettled([alipay.close(), wechat.close(), stripe.close()]);
    }
  });
});

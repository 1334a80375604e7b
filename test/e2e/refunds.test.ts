/**
 * What staff see of a refund WeChat Pay has not finished, in Chromium against the real app (PostgreSQL +
 * Redis) with the WeChat Pay fake (issue 46): an admin refunds a paid order, WeChat Pay answers
 * PROCESSING, and the order page says the refund is in progress; WeChat Pay then says ABNORMAL, and the
 * page shows a failed refund with the provider's word and offers to refund again, in English and in
 * Chinese; the second refund succeeds. Screenshots go to test-results/refund-*.png.
 */
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawNotification } from '../../server/modules/billing/providers/provider.ts';
import { startWechatFake, type WechatFake } from '../fixtures/wechat-fake.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';
import { ensureBuilt, launchChromium, resultsDir } from './identity-browser.ts';

let testApp: TestApp;
let mode: Awaited<ReturnType<typeof realMode>>;
let wechat: WechatFake;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  mode = await realMode();
  wechat = await startWechatFake();
  const { config, env } = wechat.config();
  testApp = await startApp(mode.config, { config: { payments: { wechat: config } }, env });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await testApp?.close();
  await wechat?.close();
  await mode?.cleanup();
});

const shot = (page: Page, name: string) => page.screenshot({ path: resolve(resultsDir, `refund-${name}.png`), fullPage: true });

async function notify(notice: RawNotification): Promise<number> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(notice.headers)) if (typeof value === 'string') headers[name] = value;
  const response = await fetch(`${testApp.url}/api/membership/payments/wechat/notify`, { method: 'POST', headers, body: new Uint8Array(notice.body) });
  await response.arrayBuffer();
  return response.status;
}

describe('refunds in the admin app', () => {
  it('a PROCESSING refund shows as in progress; ABNORMAL shows as a failed refund staff can refund again (en, zh-CN)', async () => {
    const people = seed(testApp);
    const member = await people.member({ tag: 'e2e-refund' });
    const admin = await people.staff('admin', 'e2e-refund-admin');
    const created = await member.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'wechat', currency: 'CNY' } });
    const { order } = (await created.json()) as { order: { id: string; amountMinor: number } };
    expect(await notify(wechat.notice(wechat.pay(order.id, order.amountMinor)))).toBe(204);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: testApp.url, locale: 'en-US' });
    const problems: string[] = [];
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: admin.web.cookie!, url: testApp.url }]);
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      await page.goto(`/admin/orders/${order.id}`);
      await page.locator(`[data-order="${order.id}"]`).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('Paid');

      wechat.refundStatus = 'PROCESSING';
      await page.getByRole('button', { name: 'Refund', exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel(/^Reason/).fill('Bought by mistake');
      await dialog.getByRole('button', { name: 'Refund' }).click();
      await page.getByRole('status').filter({ hasText: /The provider accepted the refund of CNY\s65\.00; the money is on its way\./ }).waitFor();
      await expect.poll(() => page.getByTestId('order-state').innerText()).toBe('Refund in progress');
      expect(await page.getByTestId('refund-state').innerText()).toMatch(/^Refund in progress since /);
      // Not refunded yet: nothing to refund again.
      expect(await page.getByRole('button', { name: /^Refund/ }).count()).toBe(0);
      await shot(page, 'en-pending');

      expect(await notify(wechat.refundNotice(`${order.id}R1`, 'ABNORMAL'))).toBe(204);
      await page.reload();
      await page.locator(`[data-order="${order.id}"]`).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('Refund failed');
      expect(await page.getByTestId('refund-state').innerText()).toContain('Refund failed (ABNORMAL): the provider gave it up and no money was returned.');
      await page.getByRole('button', { name: 'Refund again' }).waitFor();
      await expect.poll(() => page.locator('.audit-table tbody tr[data-action="order:refund-fail"]').count()).toBe(1);
      await shot(page, 'en-failed');

      await page.getByLabel('Language').selectOption('zh-CN');
      await page.getByRole('heading', { level: 1, name: '订单' }).waitFor();
      expect(await page.getByTestId('order-state').innerText()).toBe('退款失败');
      expect(await page.getByTestId('refund-state').innerText()).toContain('退款失败（ABNORMAL）');
      await shot(page, 'zh-failed');

      wechat.refundStatus = 'SUCCESS';
      await page.getByRole('button', { name: '重新退款' }).click();
      const again = page.getByRole('dialog');
      await again.getByLabel(/^原因/).fill('第二次退款');
      await again.getByRole('button', { name: '退款' }).click();
      await page.getByRole('status').filter({ hasText: '已退款 ¥65.00。' }).waitFor();
      await expect.poll(() => page.getByTestId('order-state').innerText()).toBe('已退款');
      expect(await page.getByTestId('refund-state').count()).toBe(0);
      await shot(page, 'zh-refunded');
      expect(problems).toEqual([]);
    } finally {
      wechat.refundStatus = 'SUCCESS';
      await context.close();
    }
  });
});

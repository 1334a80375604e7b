/**
 * A fresh `npm start` (embedded PGlite, in-process Redis stand-ins, no payment keys, not production): the
 * sandbox is on by itself, so the whole upgrade story works — checkout, the sandbox pay page's endpoint,
 * Pro's pools at once, cancel, and the period-end job's expiry back to Free (its SKIP LOCKED query on PGlite).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { embeddedMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';

const mode = embeddedMode();
let app: TestApp;

beforeAll(async () => {
  app = await startApp(mode.config);
});

afterAll(async () => {
  await app?.close();
  await mode.cleanup();
});

it('the sandbox is on by default and takes a member from Free to Pro and back', async () => {
  const methods = (await (await fetch(`${app.url}/api/membership/payments/methods`)).json()) as { providers: { id: string; enabled: boolean }[] };
  expect(methods.providers.filter((provider) => provider.enabled).map((provider) => provider.id)).toEqual(['sandbox']);
  expect((methods as unknown as { prices: Record<string, Record<string, number>> }).prices).toEqual({ free: {}, pro: { USD: 900, CNY: 6500 }, max_x5: { USD: 1900, CNY: 13_800 }, max_x20: { USD: 3900, CNY: 28_300 } });

  const member = await seed(app).member({ tag: 'embedded-buyer' });
  const key = await member.key();
  const created = await member.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'sandbox', currency: 'USD' } });
  expect(created.status).toBe(201);
  const { order, payUrl } = (await created.json()) as { order: { id: string; amount: string }; payUrl: string };
  expect(order.amount).toBe('9.00');
  expect(payUrl).toBe(`${app.url}/payments/sandbox/${order.id}`);
  const page = await member.web.fetch(`/api/membership/payments/sandbox/${order.id}`);
  expect(((await page.json()) as { order: { state: string } }).order.state).toBe('created');
  const paid = await member.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' });
  expect(((await paid.json()) as { order: { state: string } }).order.state).toBe('paid');

  const usage = async () => ((await (await fetch(`${app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { packageId: string }).packageId;
  expect(await usage()).toBe('pro');
  const cancelled = await member.web.fetch('/api/membership/subscription/cancel', { method: 'POST' });
  const { subscription } = (await cancelled.json()) as { subscription: { state: string; currentPeriodEnd: string } };
  expect(subscription.state).toBe('cancelled');

  expect(await app.app.services.subscriptions.runPeriodEnd(new Date(Date.parse(subscription.currentPeriodEnd) + 1000))).toBe(1);
  expect(await usage()).toBe('free');
  const after = (await (await member.web.fetch('/api/membership/subscription')).json()) as { subscription: { state: string } };
  expect(after.subscription.state).toBe('expired');
});

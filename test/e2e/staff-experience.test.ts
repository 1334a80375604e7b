/**
 * Support staff and members in Chromium against the real app (two instances on one PostgreSQL and Redis,
 * and the scripted upstream), issue 49 items 5–8:
 *   5. the dashboard's review-queue tile and the navigation's count change as applications arrive and are
 *      decided — on the other instance — without a reload;
 *   6. one search box finds an organisation by its name, a key, a request and an order, and opens the
 *      record when there is one;
 *   7. the usage table names each request's id, key, outcome and duration, and a request's page tells its
 *      story — to its member, and to staff with who paid and where an organisation key connected from;
 *   8. the audit log speaks words, before → after, with money, packages and times formatted, in English
 *      and in Chinese.
 * Every page is drawn at 375, 768 and 1280 px wide, in both languages, without sideways scrolling; the
 * screenshots are in test-results/staff-exp-*.png.
 */
import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, settled as settledApps, startApp, type TestApp } from '../helpers/app.ts';
import { applyFor, organisationKey } from '../helpers/enterprise.ts';
import { seed, type Person, type SeededKey } from '../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { ensureBuilt, launchChromium, resultsDir } from './identity-browser.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;
let upstream: ScriptedUpstream;
let browser: Browser;
let support: Person;
let admin: Person;
const tag = `zeb${Date.now().toString(36)}`;

beforeAll(async () => {
  await ensureBuilt();
  upstream = await startScriptedUpstream();
  mode = await realMode();
  const env = { SVC_UPSTREAM_URL: upstream.url };
  a = await startApp(mode.config, { env });
  b = await startApp(mode.config, { env });
  support = await seed(a).staff('support', 'e2e-support');
  admin = await seed(a).staff('admin', 'e2e-admin');
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await b?.close();
  await a?.close();
  await upstream?.close();
  await mode?.cleanup();
});

type Language = 'en' | 'zh-CN';

/** A signed-in browser in `language` (navigator.languages and Accept-Language), problems collected. */
async function signedIn(person: Person, language: Language = 'en'): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: a.url, locale: language });
  await context.addCookies([{ name: 'svc_membership_session', value: person.web.cookie!, url: a.url }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return { page, context, problems };
}

/** The page at 375, 768 and 1280 px: it must fit each width (tables scroll inside their frame), and is kept as a screenshot. */
async function shots(page: Page, name: string, language: Language): Promise<void> {
  for (const width of [375, 768, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(150);
    await page.screenshot({ path: resolve(resultsDir, `staff-exp-${name}-${language}-${width}.png`), fullPage: true });
    const overflow = await page.evaluate(() => {
      // For the message: the outermost elements that stick out (what scrolls inside a frame of its own does not count).
      const scrolls = (element: Element) => ['auto', 'scroll', 'hidden'].includes(getComputedStyle(element).overflowX);
      const inFrame = (element: Element) => {
        for (let up = element.parentElement; up; up = up.parentElement) if (scrolls(up)) return true;
        return false;
      };
      const wide = [...document.querySelectorAll('body *')].filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !inFrame(element));
      return { by: document.documentElement.scrollWidth - document.documentElement.clientWidth, what: wide.slice(0, 5).map((element) => `${element.tagName}.${element.className}`) };
    });
    expect(overflow.by, `${name} (${language}) at ${width} px scrolls sideways by ${overflow.by} px: ${overflow.what.join(', ')}`).toBeLessThanOrEqual(0);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** One chat request on instance `on`; the id its reply carried. */
async function chat(token: string, content: string, stream = false): Promise<string> {
  const reply = await fetch(`${a.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'svc-2.1-fast', stream, messages: [{ role: 'user', content }] }),
  });
  await reply.text();
  return reply.headers.get('x-request-id')!;
}

/**
 * The request page's cost breakdown: its total is the charge the ledger recorded (as the member's REST
 * detail returns it) and the page's "Charged" fact, to the digit, with an input and an output line for the
 * tokens billed.
 */
async function expectCostBreakdown(page: Page, payer: Person, requestId: string, language: Language): Promise<void> {
  const response = await payer.web.fetch(`/api/membership/usage/requests/${requestId}`);
  expect(response.status).toBe(200);
  const { request } = (await response.json()) as { request: { cost: { amount: string; amountMicros: number; currency: string }; inputTokens: number; outputTokens: number } };
  const { rows } = await mode.database.query('select cost_micros from usage_ledger where request_id = $1', [requestId]);
  expect(Number((rows[0] as { cost_micros: string }).cost_micros)).toBe(request.cost.amountMicros);
  expect(request.cost.amountMicros).toBeGreaterThan(0);

  const total = page.getByTestId('cost-breakdown-total');
  await total.waitFor();
  const text = await total.innerText();
  expect(text).toContain(request.cost.currency);
  expect(Number(text.replace(/[^\d.]/g, ''))).toBe(Number(request.cost.amount));
  expect(text).toBe(await page.getByTestId('request-detail-cost').innerText());
  expect(await page.getByTestId('cost-breakdown-stale').count()).toBe(0);

  const tokens = (count: number) => new Intl.NumberFormat(language).format(count);
  const input = await page.getByTestId('cost-line-input').innerText();
  const output = await page.getByTestId('cost-line-output').innerText();
  expect(input).toMatch(new RegExp(`^${language === 'en' ? 'Input' : '输入'}\\s+${tokens(request.inputTokens)} tokens × ${request.cost.currency}`));
  expect(output).toMatch(new RegExp(`^${language === 'en' ? 'Output' : '输出'}\\s+${tokens(request.outputTokens)} tokens × ${request.cost.currency}`));
}

async function settled(): Promise<void> {
  await settledApps(a);
}

describe('support staff and members', () => {
  it('the review queue tile and the navigation count follow applications submitted and decided on another instance, without a reload', async () => {
    const { page, context, problems } = await signedIn(support);
    try {
      await page.goto('/admin');
      const tile = page.getByTestId('review-queue-tile').locator('.tile__value');
      await expect.poll(() => tile.textContent(), { timeout: 10_000 }).toBe('0');
      expect(await page.getByTestId('pending-count').count()).toBe(0);
      await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
      // Let the subscription reach the server before the event it must see.
      await page.waitForTimeout(500);

      const applicant = await seed(b).member({ tag: 'applicant' });
      const submitted = await applicant.web.at(b.url).graphql<{ submitEnterpriseApplication: { id: string } }>(
        'mutation($input: EnterpriseApplicationInput!) { submitEnterpriseApplication(input: $input) { id } }',
        { input: { kind: 'enterprise', organisation: `Queue ${tag}`, contactEmail: 'ops@example.com', website: 'https://queue.example', country: 'DE', useCase: 'Drafting support replies for our customers.', expectedMonthlyTokens: 90_000_000 } },
      );
      expect(submitted.errors).toBeUndefined();
      await expect.poll(() => tile.textContent(), { timeout: 10_000 }).toBe('1');
      const count = page.getByRole('navigation', { name: 'Admin' }).getByTestId('pending-count');
      await expect.poll(() => count.locator('[aria-hidden="true"]').textContent(), { timeout: 10_000 }).toBe('1');
      await page.getByRole('link', { name: /Applications\s*1 application waiting for review/ }).waitFor();
      await shots(page, 'dashboard-queue', 'en');

      const rejected = await admin.web.at(b.url).graphql('mutation($id: ID!) { rejectEnterpriseApplication(id: $id, reason: "Not a business use.") { id } }', { id: submitted.data!.submitEnterpriseApplication.id });
      expect(rejected.errors).toBeUndefined();
      await expect.poll(() => tile.textContent(), { timeout: 10_000 }).toBe('0');
      await expect.poll(() => count.count(), { timeout: 10_000 }).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("a member's usage table names each request's id, key, outcome and duration; its page tells the story, and nobody else's", async () => {
    const member = await seed(a).member({ tag: 'story' });
    const laptop = await member.withKey('laptop');
    const ok = await chat(laptop.key, 'hello');
    const failed = await chat(laptop.key, '#script {"status":503}');
    const cut = await chat(laptop.key, '#script {"failAfterChunks":3,"intervalMs":5}', true);
    await settled();

    for (const language of ['en', 'zh-CN'] as const) {
      const { page, context, problems } = await signedIn(member, language);
      try {
        await page.goto('/account/usage');
        await expect.poll(() => page.locator('[data-request-id]').count(), { timeout: 10_000 }).toBe(3);
        const row = page.locator(`[data-request-id="${ok}"]`);
        expect(await row.locator('.credential').innerText()).toBe(`laptop …${laptop.key.slice(-4)}`);
        expect(await row.locator('td').last().innerText()).toMatch(language === 'en' ? /^\d+\.\d\d sec$/ : /^\d+\.\d\d秒$/);
        expect(await page.locator(`[data-request-id="${failed}"] .usage-table__code`).innerText()).toBe('upstream_unavailable');
        await shots(page, 'usage', language);

        await page.locator(`[data-request-id="${failed}"] a.request-link`).click();
        await page.waitForURL(`**/account/usage/requests/${failed}`);
        const summary = page.getByTestId('request-summary');
        await summary.waitFor();
        expect(await summary.innerText()).toContain(language === 'en' ? 'Failed before any output (upstream_unavailable, stage: model server) and was refunded in full' : '在产生任何输出前失败（upstream_unavailable，阶段：模型服务），已全额退还');
        expect(await page.getByTestId('request-refunded').innerText()).toBe(language === 'en' ? 'Yes: in full, nothing was charged' : '是：已全额退还，没有计费');
        await shots(page, 'request-refunded', language);

        await page.goto(`/account/usage/requests/${cut}`);
        await page.getByTestId('request-error-code').waitFor();
        expect(await page.getByTestId('request-error-code').innerText()).toBe('upstream_error');
        expect(await page.getByTestId('request-refunded').innerText()).toBe(language === 'en' ? 'No' : '否');
        await page.goto(`/account/usage/requests/${ok}`);
        await page.getByTestId('request-summary').waitFor();
        expect(await page.getByTestId('request-summary').innerText()).toMatch(language === 'en' ? /^Completed in \d+\.\d\d sec: / : /^用时 \d+\.\d\d秒完成/);
        await expectCostBreakdown(page, member, ok, language);
        await page.getByTestId('cost-breakdown').screenshot({ path: resolve(resultsDir, `staff-exp-cost-breakdown-${language}.png`) });
        await shots(page, 'request-ok', language);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }

    const stranger = await seed(a).member({ tag: 'stranger' });
    const { page, context } = await signedIn(stranger);
    try {
      await page.goto(`/account/usage/requests/${ok}`);
      await page.getByText('This request is not on your account.').waitFor();
      expect(await page.getByTestId('request-summary').count()).toBe(0);
      await shots(page, 'request-not-yours', 'en');
    } finally {
      await context.close();
    }
  });

  it('one search box finds organisations by name, a key, a request and an order, and opens the record when there is one', async () => {
    const owner = await seed(a).member({ tag: `${tag}-owner` });
    const key: SeededKey = await owner.withKey('billing-server');
    const logistics = await applyFor(owner, { organisation: `${tag} Logistics` });
    const other = await seed(a).member({ tag: 'other-owner' });
    await applyFor(other, { organisation: `${tag} Freight` });
    const organisationToken = await organisationKey(owner, logistics.organisationId!);
    const organisationRequest = await chat(organisationToken, 'from the warehouse');
    const request = await chat(key.key, 'where is my parcel');
    await settled();
    const checkout = await owner.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'sandbox', currency: 'USD' } });
    const orderId = ((await checkout.json()) as { order: { id: string } }).order.id;

    for (const language of ['en', 'zh-CN'] as const) {
      const { page, context, problems } = await signedIn(support, language);
      const search = async (text: string) => {
        await page.getByRole('searchbox').fill(text);
        await page.getByRole('searchbox').press('Enter');
      };
      try {
        await page.goto('/admin/accounts');
        await search(tag.toUpperCase());
        await expect.poll(() => page.locator('.search-hit').count(), { timeout: 10_000 }).toBe(3);
        expect(await page.locator('.search-hit[data-kind="organisation"]').count()).toBe(2);
        expect(await page.locator(`.search-hit[data-kind="account"][data-hit="${owner.id}"]`).count()).toBe(1);
        await shots(page, 'search-results', language);

        // A whole key: straight to its owner's page.
        await search(key.key);
        await page.waitForURL(`**/admin/accounts/${owner.id}`);
        // A request id: its story, with who paid.
        await page.goto('/admin');
        await search(request);
        await page.waitForURL(`**/admin/requests/${request}`);
        await page.getByTestId('request-payer').waitFor();
        expect(await page.getByTestId('request-payer').innerText()).toBe(owner.email);
        await expectCostBreakdown(page, owner, request, language);
        await shots(page, 'staff-request', language);
        // An organisation key's request says where it connected from.
        await page.goto(`/admin/accounts?q=${organisationRequest}`);
        await page.waitForURL(`**/admin/requests/${organisationRequest}`);
        await page.getByTestId('request-client-ip').waitFor();
        expect(await page.getByTestId('request-client-ip').innerText()).toBe('127.0.0.1');
        expect(await page.getByTestId('request-payer').innerText()).toBe(`${tag} Logistics`);
        await shots(page, 'staff-request-organisation', language);
        // An order number: the order.
        await page.goto('/admin/accounts');
        await search(orderId);
        await page.waitForURL(`**/admin/orders/${orderId}`);
        // Nothing: said plainly, with how the text was read.
        await page.goto('/admin/accounts');
        await search('@nowhere.example');
        await page.getByText(language === 'en' ? 'Nothing matches “@nowhere.example”.' : '没有与“@nowhere.example”匹配的结果。').waitFor();
        await shots(page, 'search-empty', language);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  it('the audit log speaks words: each change named, before → after, money, packages and times formatted, in English and Chinese', async () => {
    const buyer = await seed(a).member({ tag: 'audited' });
    const { keyId } = await buyer.withKey('old laptop');
    const checkout = await buyer.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'sandbox', currency: 'USD' } });
    const orderId = ((await checkout.json()) as { order: { id: string } }).order.id;
    expect((await buyer.web.fetch(`/api/membership/payments/sandbox/${orderId}/pay`, { method: 'POST' })).status).toBe(200);
    const changed = await admin.web.graphql('mutation($id: ID!) { setAccountPackage(accountId: $id, packageId: "max_x5", reason: "Conference speaker") { id } }', { id: buyer.id });
    expect(changed.errors).toBeUndefined();
    const revoked = await support.web.graphql('mutation($id: ID!) { revokeApiKey(id: $id, reason: "Key posted in a public repository") { id } }', { id: keyId });
    expect(revoked.errors).toBeUndefined();

    const words = {
      en: { package: /Package\s*Pro\s*→\s*Max x5/, amount: /Amount\s*USD\s9\.00/, provider: /Payment method\s*Sandbox/, state: /State\s*Awaiting payment\s*→\s*Paid/, period: /Period ends\s*[A-Z][a-z]{2} \d/ },
      'zh-CN': { package: /套餐\s*Pro\s*→\s*Max x5/, amount: /金额\s*USD\s9\.00/, provider: /付款方式\s*沙盒/, state: /状态\s*待付款\s*→\s*已付款/, period: /周期结束\s*\d{4}年/ },
    };
    for (const language of ['en', 'zh-CN'] as const) {
      const { page, context, problems } = await signedIn(support, language);
      try {
        await page.goto(`/admin/accounts/${buyer.id}`);
        await expect.poll(() => page.locator('.audit-table tbody tr').count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(4);
        const rowOf = (action: string) => page.locator(`.audit-table tbody tr[data-action="${action}"]`).first();
        const text = words[language];
        expect(await rowOf('account:set-package').innerText()).toMatch(text.package);
        expect(await rowOf('subscription:start').innerText()).toMatch(text.period);
        await shots(page, 'account-audit', language);

        await page.goto(`/admin/audit?targetType=order&targetId=${orderId}`);
        await expect.poll(() => page.locator('.audit-table tbody tr').count(), { timeout: 10_000 }).toBe(2);
        const paid = await rowOf('order:paid').innerText();
        expect(paid).toMatch(text.amount);
        expect(paid).toMatch(text.provider);
        expect(paid).toMatch(text.state);
        await shots(page, 'audit-order', language);

        // No field anywhere on the log is shown by its code.
        await page.goto('/admin/audit');
        await expect.poll(() => page.locator('.audit-table tbody tr').count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(6);
        expect(await page.locator('.audit-change__field code').count()).toBe(0);
        const fields = await page.locator('.audit-change__field').allInnerTexts();
        expect(fields.filter((field) => /^[a-z]+[A-Z]/.test(field))).toEqual([]);
        await shots(page, 'audit', language);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });
});

/**
 * An organisation's monthly statement and its credit (issue 51 items 4–5) in Chromium against the real app
 * (PostgreSQL + Redis, the sandbox provider, a scripted model server): an organisation's two keys make real
 * requests, its owner buys it a package and, from the console's Credit page, credit (and opts it in to pay
 * from credit); the statement page shows usage by model and by key equal to the ledger's own sums, the
 * payments and the credit's opening and closing; printed (print media) it hides the site and the buttons,
 * and Chromium makes a PDF of it. A plain member of the organisation gets no statement. Screenshots:
 * test-results/statement-*.png, the PDF test-results/statement.pdf.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { realMode, settled, startApp, type TestApp } from '../helpers/app.ts';
import { addMember, applyFor, organisationKey } from '../helpers/enterprise.ts';
import { seed } from '../helpers/seed.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir } from './identity-browser.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let upstream: ScriptedUpstream;
let browser: Browser;

beforeAll(async () => {
  await ensureBuilt();
  upstream = await startScriptedUpstream();
  mode = await realMode();
  app = await startApp(mode.config, { config: { payments: { sandbox: { enabled: true } } }, env: { SVC_UPSTREAM_URL: upstream.url } });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await upstream?.close();
  await mode?.cleanup();
});

const shot = async (page: Page, name: string) => {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: resolve(resultsDir, `statement-${name}.png`), fullPage: true });
};

const sql = <T,>(text: string, params: unknown[] = []) => app.app.services.db.orm.em.fork().getConnection().execute<T[]>(text, params);

async function chat(token: string, model: string, content: string): Promise<void> {
  const reply = await fetch(`${app.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  expect(reply.status, await reply.clone().text()).toBe(200);
  await reply.text();
}

describe('organisation monthly statement', () => {
  it('shows the ledger’s usage by model and by key, payments and credit; prints to a clean PDF', async () => {
    const owner = await seed(app).member({ tag: 'e2e-statement-owner' });
    const colleague = await seed(app).member({ tag: 'e2e-statement-member' });
    const name = `Statement Works ${Date.now().toString(36)}`;
    const { organisationId } = await applyFor(owner, { organisation: name });
    const org = organisationId!;
    await addMember(owner, org, colleague, 'member', (id) => sql('update account set email_verified_at = now() where id = ?', [id]));

    // Usage: two keys, two models, real requests through the gateway.
    const backend = await organisationKey(owner, org);
    const minted = await owner.web.fetch(`/api/membership/enterprise/organisations/${org}/keys`, { body: { name: 'batch jobs' } });
    expect(minted.status).toBe(201);
    const batch = ((await minted.json()) as { token: string }).token;
    await chat(backend, 'svc-2.1-fast', 'hello from the backend');
    await chat(backend, 'svc-2.1', 'write a haiku about ledgers');
    await chat(batch, 'svc-2.1-fast', 'summarise the month');
    await settled(app);
    // A request of the month before: on the previous statement, not on this one.
    await sql(
      `insert into usage_ledger (request_id, account_id, payer_id, payer_kind, credential_kind, credential_id, channel, model, routed_model, class, stream,
         input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, latency_ms, created_at)
       values (?, ?, ?, 'organisation', 'enterprise_key', 'old-key', 'enterprise', 'svc-2.1', 'svc-2.1', 'premium', false, 100, 100, false, 777, 777, 'USD', 'ok', 10, date_trunc('month', now() at time zone 'UTC') at time zone 'UTC' - interval '1 hour')`,
      [`mbr_old${randomUUID().replaceAll('-', '')}`, org, org],
    );

    // A payment: the owner buys the organisation Pro through the sandbox.
    const checkout = await owner.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'sandbox', currency: 'USD', organisationId: org } });
    expect(checkout.status).toBe(201);
    const proOrder = ((await checkout.json()) as { order: { id: string } }).order.id;
    expect((await owner.web.fetch(`/api/membership/payments/sandbox/${proOrder}/pay`, { method: 'POST' })).status).toBe(200);

    const month = new Date().toISOString().slice(0, 7);
    const { page, context, problems } = await openPage(browser, app.url);
    try {
      await context.addCookies([{ name: 'svc_membership_session', value: owner.web.cookie!, url: app.url }]);

      // Organisation credit from the console: buy 20 with the sandbox, opt in to pay from credit.
      await page.goto(`/enterprise/console?org=${org}`);
      await page.getByRole('heading', { level: 2, name }).waitFor();
      await page.getByRole('link', { name: 'Credit' }).click();
      await page.getByRole('heading', { name: 'Organisation credit' }).waitFor();
      await expect.poll(() => page.getByTestId('credit-balance').textContent()).toMatch(/0\.00/);
      expect(await page.getByRole('button', { name: 'Redeem' }).count()).toBe(0);
      await page.getByLabel('Pay from credit when a pool is used up').click();
      await expect.poll(async () => (await app.app.services.creditLedger.balance(org)).payFromCredit).toBe(true);
      expect((await app.app.services.creditLedger.balance(owner.id)).payFromCredit).toBe(false);
      await page.getByRole('button', { name: /20\.00/ }).click();
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL('**/checkout/**');
      const creditOrder = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
      await page.getByRole('button', { name: 'Pay USD\u00a020.00' }).click();
      await page.getByRole('heading', { name: 'Payment received' }).waitFor();
      expect((await app.app.services.creditLedger.balance(org)).balanceMicros).toBe(20_000_000);
      expect((await app.app.services.creditLedger.balance(owner.id)).balanceMicros).toBe(0);
      await page.goto(`/account/credits?org=${org}`);
      await expect.poll(() => page.getByTestId('credit-balance').textContent(), { timeout: 10_000 }).toMatch(/20\.00/);
      await shot(page, 'organisation-credit');

      // The statement, against the ledger's own sums for the month.
      await page.goto(`/enterprise/console?org=${org}`);
      await page.getByRole('link', { name: 'Monthly statement' }).click();
      await page.waitForURL(/\/enterprise\/console\/statement\?org=/);
      await page.goto(`/enterprise/console/statement?org=${org}&month=${month}`);
      const statement = page.getByRole('article');
      await statement.getByTestId('statement-number').waitFor();
      expect(await statement.getByTestId('statement-number').textContent()).toBe(`ST-${month.replace('-', '')}-${org.replaceAll('-', '').slice(0, 8).toUpperCase()}`);
      expect(await statement.getByTestId('statement-organisation').textContent()).toBe(name);
      await statement.getByText(owner.email).first().waitFor();

      const range = `created_at >= date_trunc('month', now() at time zone 'UTC') at time zone 'UTC'`;
      const byModel = await sql<{ model: string; requests: string; cost: string }>(
        `select model, count(*) as requests, sum(cost_micros) as cost from usage_ledger where payer_id = ? and ${range} group by model`,
        [org],
      );
      expect(byModel.map((row) => row.model).sort()).toEqual(['svc-2.1', 'svc-2.1-fast']);
      for (const row of byModel) {
        const line = statement.getByTestId('statement-models').locator(`tr[data-line="${row.model}"]`);
        expect(await line.locator('td').first().textContent()).toBe(row.requests);
        expect(await line.locator('td[data-cost-micros]').getAttribute('data-cost-micros')).toBe(String(row.cost));
      }
      const [total] = await sql<{ cost: string }>(`select sum(cost_micros) as cost from usage_ledger where payer_id = ? and ${range}`, [org]);
      expect(Number(total!.cost)).toBeGreaterThan(0);
      expect(await statement.getByTestId('statement-models').locator('tfoot td[data-cost-micros]').getAttribute('data-cost-micros')).toBe(String(total!.cost));

      const byKey = await sql<{ credential_id: string; name: string; requests: string; cost: string }>(
        `select l.credential_id, k.name, count(*) as requests, sum(l.cost_micros) as cost from usage_ledger l join api_key k on k.id::text = l.credential_id
          where l.payer_id = ? and ${range.replace('created_at', 'l.created_at')} group by l.credential_id, k.name`,
        [org],
      );
      expect(byKey.map((row) => row.name).sort()).toEqual(['backend', 'batch jobs']);
      for (const row of byKey) {
        const line = statement.getByTestId('statement-keys').locator(`tr[data-line="${row.credential_id}"]`);
        expect(await line.locator('th').textContent()).toContain(row.name);
        expect(await line.locator('td').first().textContent()).toBe(row.requests);
        expect(await line.locator('td[data-cost-micros]').getAttribute('data-cost-micros')).toBe(String(row.cost));
      }

      const payments = statement.getByTestId('statement-payments');
      await payments.locator(`tr[data-order="${proOrder}"]`).waitFor();
      await payments.locator(`tr[data-order="${creditOrder}"]`).waitFor();
      expect(await statement.getByTestId('statement-paid-USD').textContent()).toMatch(/29\.00/);
      expect(await statement.getByTestId('statement-credit-opening').textContent()).toMatch(/0\.00/);
      expect(await statement.getByTestId('statement-credit-closing').textContent()).toMatch(/20\.00/);
      await statement.getByText('This month is still running: the figures are so far.').waitFor();
      await shot(page, 'en');

      // Print: no site header, no buttons, A4 pages; Chromium makes the PDF.
      await page.emulateMedia({ media: 'print' });
      expect(await page.locator('.site-header').isVisible()).toBe(false);
      expect(await page.getByRole('button', { name: 'Print / Save as PDF' }).isVisible()).toBe(false);
      expect(await page.locator('.statement-controls').isVisible()).toBe(false);
      expect(await statement.getByTestId('statement-number').isVisible()).toBe(true);
      await shot(page, 'print');
      const pdf = await page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
      await writeFile(resolve(resultsDir, 'statement.pdf'), pdf);
      expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      // A small statement keeps its sections whole and fits on one or two pages rather than one page each.
      const pages = (pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? []).length;
      expect(pages).toBeGreaterThanOrEqual(1);
      expect(pages).toBeLessThanOrEqual(2);
      await page.emulateMedia({ media: 'screen' });

      // The month before holds only the old request; the same figures over REST.
      const previous = await owner.web.fetch(`/api/membership/enterprise/organisations/${org}/statements/${previousMonth(month)}`);
      expect(previous.status).toBe(200);
      const before = ((await previous.json()) as { statement: { usageTotal: { requests: number; cost: { amountMicros: number } }; complete: boolean; usageByKey: { credentialKind: string; keyId: string | null }[] } }).statement;
      expect(before).toMatchObject({ complete: true, usageTotal: { requests: 1, cost: { amountMicros: 777 } } });
      expect(before.usageByKey).toEqual([expect.objectContaining({ credentialKind: 'enterprise_key', keyId: null })]);

      // In Chinese.
      await page.evaluate(() => (document.cookie = 'svc_locale=zh-CN; Path=/'));
      await page.reload();
      await page.getByRole('heading', { name: '月度对账单' }).waitFor();
      await statement.getByTestId('statement-number').waitFor();
      await statement.getByRole('heading', { name: '按密钥统计用量' }).waitFor();
      await shot(page, 'zh-CN');

      // A plain member gets no statement, and no link to one.
      const refused = await colleague.web.fetch(`/api/membership/enterprise/organisations/${org}/statements/${month}`);
      expect(refused.status).toBe(403);
      const future = await owner.web.fetch(`/api/membership/enterprise/organisations/${org}/statements/2999-01`);
      expect(future.status).toBe(400);
      expect(((await future.json()) as { code: string; error: { message: string } }).error.message).toContain('has not begun');
      expect(problems).toEqual([]);
    } catch (error) {
      await shot(page, 'failure').catch(() => undefined);
      throw new Error(`${(error as Error).message}\nbrowser problems: ${JSON.stringify(problems)}`, { cause: error });
    } finally {
      await context.close();
    }
  }, 180_000);
});

function previousMonth(month: string): string {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return number === 1 ? `${year - 1}-12` : `${year}-${String(number - 1).padStart(2, '0')}`;
}

/**
 * Every page of the web app in Chromium, signed out, as a member and as staff, in English and Chinese
 * (issue 49 items 9 and 11):
 *   - axe-core finds nothing serious or critical (WCAG 2.1 A and AA rules);
 *   - at 375, 768 and 1280 px wide nothing scrolls sideways (document.scrollWidth ≤ innerWidth): tables stack
 *     or scroll inside their own frame, code scrolls inside its block. Screenshots: test-results/access-*.png
 *     (not committed);
 *   - the focus ring stands out 3:1 from what is behind it;
 *   - tabs follow the WAI-ARIA tabs pattern (arrow keys, Home, End, one tab stop);
 *   - a dialog closed by Escape or by its buttons gives focus back to the button that opened it;
 *   - the keys table on /account, with a key that has every limit set, fits its card at 1280 px (nothing
 *     scrolls inside its frame either) and on a phone, where its rows stack.
 * One browser for the file; one page per role and language, reused for every path.
 */
import { resolve } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, settled, startApp, type TestApp } from '../helpers/app.ts';
import { applyFor, submitApplication } from '../helpers/enterprise.ts';
import { seed, type Person } from '../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { ensureBuilt, launchChromium, resultsDir } from './identity-browser.ts';

type Language = 'en' | 'zh-CN';
type Role = 'signed-out' | 'member' | 'staff';
const languages: Language[] = ['en', 'zh-CN'];
const widths = [375, 768, 1280] as const;

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let upstream: ScriptedUpstream;
let browser: Browser;
let member: Person;
let staff: Person;
/** Every path of the router (web/src/routes.tsx) each role can reach, with real ids filled in. */
let pages: Record<Role, string[]>;

beforeAll(async () => {
  await ensureBuilt();
  upstream = await startScriptedUpstream();
  mode = await realMode();
  app = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
  staff = await seed(app).staff('admin', 'access-admin');
  member = await seed(app).member({ tag: 'access-member' });

  // A member with a request, a paid order, an open order and an organisation; a pending application for staff.
  const { key, keyId } = await member.withKey('laptop');
  // Every limit set: the longest cells the keys table draws.
  const limited = await member.web.fetch(`/api/membership/auth/api-keys/${keyId}`, {
    method: 'PATCH',
    body: { budgetDay: '5', budgetMonth: '50', requestsPerMinute: 30, models: ['svc-2.1-fast', 'svc-2.1', 'svc-2.1-search'], expiresAt: '2099-12-31' },
  });
  expect(limited.status, await limited.clone().text()).toBe(200);
  const reply = await fetch(`${app.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello' }] }),
  });
  await reply.text();
  const requestId = reply.headers.get('x-request-id')!;
  await settled(app);
  const order = async () => {
    const checkout = await member.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'sandbox', currency: 'USD' } });
    return ((await checkout.json()) as { order: { id: string } }).order.id;
  };
  const paid = await order();
  expect((await member.web.fetch(`/api/membership/payments/sandbox/${paid}/pay`, { method: 'POST' })).status).toBe(200);
  const open = await order();
  await applyFor(member, { organisation: 'Access Logistics' });
  const applicant = await seed(app).member({ tag: 'access-applicant' });
  const pending = await submitApplication(applicant, { kind: 'enterprise', organisation: 'Access Research' });
  expect(pending.errors).toBeUndefined();
  const applicationId = pending.data!.submitEnterpriseApplication.id;

  const everyone = ['/', '/pricing', '/docs', '/docs/media', '/docs/search', '/docs/enterprise', '/enterprise', '/enterprise/apply', '/device', '/oauth/consent', '/oauth/consent?error=unknown_client', '/no-such-page'];
  pages = {
    'signed-out': [...everyone, '/account', '/account/usage', '/account/billing', '/account/credits', '/account/alerts', '/enterprise/console', '/admin'],
    member: [
      ...everyone,
      '/account',
      '/account/usage',
      `/account/usage/requests/${requestId}`,
      '/account/billing',
      `/account/billing/orders/${paid}`,
      `/checkout/${open}`,
      `/checkout/${paid}`,
      '/account/credits',
      '/account/alerts',
      '/enterprise/console',
      '/admin',
    ],
    staff: [
      '/admin',
      '/admin/accounts',
      `/admin/accounts/${member.id}`,
      `/admin/accounts?q=${encodeURIComponent('Access')}`,
      '/admin/audit',
      '/admin/applications',
      `/admin/applications/${applicationId}`,
      '/admin/orders',
      `/admin/orders/${paid}`,
      '/admin/outbox',
      '/admin/credit-codes',
      `/admin/requests/${requestId}`,
      '/admin/no-such-page',
    ],
  };
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await upstream?.close();
  await mode?.cleanup();
});

/** One page for `role` in `language`, reused for every path; page errors collected. */
async function pageFor(role: Role, language: Language): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: app.url, locale: language });
  const person = role === 'member' ? member : role === 'staff' ? staff : null;
  if (person) await context.addCookies([{ name: 'svc_membership_session', value: person.web.cookie!, url: app.url }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return { page, context, problems };
}

/** Opens `path` and waits until its data has arrived: nothing loading, no request in flight. */
async function visit(page: Page, path: string): Promise<void> {
  await page.goto(path);
  await page.locator('h1').first().waitFor({ timeout: 15_000 });
  await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => undefined);
  await page.waitForFunction(() => !document.querySelector('.state--loading, [aria-busy="true"]'), undefined, { timeout: 10_000 }).catch(() => undefined);
}

const slug = (path: string) => path.replace(/^\//, '').replace(/[^a-z0-9]+/gi, '-').slice(0, 60) || 'home';

describe('every page, signed out, as a member and as staff, in English and Chinese', () => {
  for (const role of ['signed-out', 'member', 'staff'] as const) {
    it(`${role}: axe finds nothing serious or critical, and nothing scrolls sideways at 375, 768 and 1280 px`, async () => {
      const findings: string[] = [];
      for (const language of languages) {
        const { page, context, problems } = await pageFor(role, language);
        try {
          for (const path of pages[role]) {
            await page.setViewportSize({ width: 1280, height: 900 });
            await visit(page, path);
            const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).options({ resultTypes: ['violations'] }).analyze();
            for (const violation of axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
              findings.push(`${language} ${path}: axe ${violation.impact} ${violation.id} (${violation.help}) at ${violation.nodes.slice(0, 3).map((node) => node.target.join(' ')).join(' | ')}`);
            }
            for (const width of widths) {
              await page.setViewportSize({ width, height: 900 });
              await page.waitForTimeout(80);
              const overflow = await page.evaluate(() => {
                const scrolls = (element: Element) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(element).overflowX);
                const framed = (element: Element) => {
                  for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) if (scrolls(up)) return true;
                  return false;
                };
                const wide = [...document.querySelectorAll('body *')].filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1 && !framed(element));
                return { by: document.documentElement.scrollWidth - window.innerWidth, what: wide.slice(0, 4).map((element) => `${element.tagName.toLowerCase()}.${[...element.classList].join('.')}`) };
              });
              if (overflow.by > 0) findings.push(`${language} ${path}: ${overflow.by} px too wide at ${width} px (${overflow.what.join(', ')})`);
              if (width === 375 || language === 'en') {
                await page.screenshot({ path: resolve(resultsDir, `access-${role}-${slug(path)}-${language}-${width}.png`), fullPage: true });
              }
            }
          }
          findings.push(...problems.map((problem) => `${language}: ${problem}`));
        } finally {
          await context.close();
        }
      }
      expect(findings).toEqual([]);
    }, 600_000);
  }
});

describe('the keys table on /account', () => {
  it('fits its card at 1280 px with a key that has limits, in English and Chinese, and stacks on a phone', async () => {
    const findings: string[] = [];
    for (const language of languages) {
      const { page, context } = await pageFor('member', language);
      try {
        await visit(page, '/account');
        const frame = page.locator('.table-scroll', { has: page.locator('tr[data-key]') });
        await frame.waitFor();
        for (const width of widths) {
          await page.setViewportSize({ width, height: 900 });
          await page.waitForTimeout(80);
          const fit = await frame.evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth }));
          // 768 px may scroll inside the frame (the page itself never does: the test above); 1280 and 375 must not.
          if (width !== 768 && fit.scroll > fit.client) findings.push(`${language} at ${width} px: the keys table is ${fit.scroll - fit.client} px wider than its card`);
          const row = page.locator('tr[data-key]').first();
          for (const name of language === 'en' ? ['Set limits', 'Revoke'] : ['设置限制', '撤销']) {
            const button = row.getByRole('button', { name });
            const box = await button.boundingBox();
            const card = await frame.boundingBox();
            if (width !== 768 && (!box || !card || box.x + box.width > card.x + card.width + 1)) findings.push(`${language} at ${width} px: "${name}" is outside the card`);
          }
          await frame.screenshot({ path: resolve(resultsDir, `access-keys-table-${language}-${width}.png`) });
        }
      } finally {
        await context.close();
      }
    }
    expect(findings).toEqual([]);
  }, 120_000);
});

/** WCAG contrast of two `rgb(…)`/`rgba(…)` colours (alpha ignored: callers pass opaque colours). */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, bl] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((part) => {
      const c = Number(part) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (high! + 0.05) / (low! + 0.05);
}

/** The focused element's outline colour and what is drawn behind it (the nearest opaque background). */
async function focusRing(page: Page): Promise<{ what: string; width: number; ring: string; behind: string }> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement;
    const style = getComputedStyle(element);
    let behind = 'rgb(255, 255, 255)';
    // The ring sits outside the element (outline-offset), so what is behind it is its parent's background.
    for (let up = element.parentElement; up; up = up.parentElement) {
      const background = getComputedStyle(up).backgroundColor;
      if (!/rgba\(.*, 0\)$|transparent/.test(background)) {
        behind = background;
        break;
      }
    }
    return { what: `${element.tagName.toLowerCase()} ${element.textContent?.trim().slice(0, 30)}`, width: parseFloat(style.outlineWidth), ring: style.outlineStyle === 'none' ? 'none' : style.outlineColor, behind };
  });
}

describe('by keyboard', () => {
  it('the focus ring stands out at least 3:1 from what is behind it, on light pages and on dark code blocks', async () => {
    const { page, context } = await pageFor('signed-out', 'en');
    try {
      const rings: Awaited<ReturnType<typeof focusRing>>[] = [];
      await visit(page, '/');
      for (let step = 0; step < 4; step += 1) {
        await page.keyboard.press('Tab');
        rings.push(await focusRing(page));
      }
      await visit(page, '/docs');
      await page.locator('.code-block__copy').first().focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      rings.push(await focusRing(page));
      await page.keyboard.press('Tab');
      rings.push(await focusRing(page));
      expect(rings.at(-2)!.what).toMatch(/^button Copy/);
      expect(rings.at(-1)!.what).toMatch(/^pre /);
      for (const ring of rings) {
        expect(ring.ring, ring.what).not.toBe('none');
        expect(ring.width, ring.what).toBeGreaterThanOrEqual(2);
        expect(contrast(ring.ring, ring.behind), `${ring.what}: ${ring.ring} on ${ring.behind}`).toBeGreaterThanOrEqual(3);
      }
      await page.screenshot({ path: resolve(resultsDir, 'access-focus-ring-code.png') });
    } finally {
      await context.close();
    }
  });

  it('the sign-in tabs follow the WAI-ARIA tabs pattern: arrows, Home and End move and select, one tab stop', async () => {
    for (const language of languages) {
      const { page, context } = await pageFor('signed-out', language);
      try {
        await visit(page, '/account');
        const tabs = page.getByRole('tablist').getByRole('tab');
        expect(await tabs.count()).toBe(3);
        const state = () =>
          page.evaluate(() => {
            const all = [...document.querySelectorAll<HTMLElement>('[role="tab"]')];
            const panel = document.querySelector('[role="tabpanel"]')!;
            return {
              selected: all.findIndex((tab) => tab.getAttribute('aria-selected') === 'true'),
              focused: all.indexOf(document.activeElement as HTMLElement),
              stops: all.filter((tab) => tab.tabIndex === 0).length,
              labelledByTheSelected: panel.getAttribute('aria-labelledby') === all.find((tab) => tab.getAttribute('aria-selected') === 'true')?.id,
              controls: all.every((tab) => tab.getAttribute('aria-controls') === panel.id),
            };
          });
        await tabs.first().focus();
        expect(await state()).toEqual({ selected: 0, focused: 0, stops: 1, labelledByTheSelected: true, controls: true });
        const steps: [string, number][] = [
          ['ArrowRight', 1],
          ['ArrowRight', 2],
          ['ArrowRight', 0],
          ['ArrowLeft', 2],
          ['Home', 0],
          ['End', 2],
          ['ArrowLeft', 1],
        ];
        for (const [key, expected] of steps) {
          await page.keyboard.press(key);
          expect(await state(), `after ${key}`).toEqual({ selected: expected, focused: expected, stops: 1, labelledByTheSelected: true, controls: true });
        }
        // Tab leaves the tablist for the panel's first field: the tabs are one stop.
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => document.activeElement?.closest('[role="tabpanel"]') !== null)).toBe(true);
      } finally {
        await context.close();
      }
    }
  });

  it('a dialog closed by Escape, by Cancel or by confirming gives focus back to the button that opened it', async () => {
    const target = await seed(app).member({ tag: 'access-target' });
    const { page, context, problems } = await pageFor('staff', 'en');
    try {
      await visit(page, `/admin/accounts/${target.id}`);
      // First in the page's order: the dialog's own confirm button has the same name.
      const opener = page.getByRole('button', { name: 'Disable account' }).first();
      const focusedIsOpener = () => opener.evaluate((button) => document.activeElement === button);

      await opener.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      expect(await focusedIsOpener()).toBe(false);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(await focusedIsOpener()).toBe(true);

      await page.keyboard.press('Enter');
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await focusedIsOpener()).toBe(true);

      // The role dialog, confirmed: done, and focus is back where the staff member was.
      const role = page.getByRole('button', { name: 'Change role' }).first();
      await role.focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor();
      await dialog.getByRole('textbox').fill('Helps with support');
      await dialog.getByRole('combobox').selectOption('support');
      await dialog.getByRole('button', { name: /Change role/ }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await role.evaluate((button) => document.activeElement === button)).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }

    // A member's upgrade dialog does the same.
    const { page: memberPage, context: memberContext } = await pageFor('member', 'zh-CN');
    try {
      await visit(memberPage, '/pricing');
      const upgrade = memberPage.locator('[data-upgrade="max_x5"]').first();
      await upgrade.focus();
      await memberPage.keyboard.press('Enter');
      await memberPage.getByRole('dialog').waitFor();
      await memberPage.keyboard.press('Escape');
      await memberPage.getByRole('dialog').waitFor({ state: 'detached' });
      expect(await upgrade.evaluate((button) => document.activeElement === button)).toBe(true);
    } finally {
      await memberContext.close();
    }
  });
});

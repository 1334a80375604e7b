/**
 * An MCP client signs in by OAuth through the real consent page in Chromium: the official SDK client (its
 * OAuth provider) discovers svc from the 401, registers, and is sent to the authorize URL; the browser,
 * signed out, lands on `/oauth/consent`, signs up there, sees the client's name, the host it returns to and
 * the access asked for, and approves with a click; the redirect reaches the client's loopback callback with
 * the code, the client exchanges it and lists and calls web_search (billed). Deny sends `access_denied`
 * back; the account page lists the client among the sessions and revokes it; a request from an unknown
 * client is explained on the page, never redirected.
 */
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startScriptedSearxng, type ScriptedSearxng } from '../fixtures/scripted-searxng.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { mcpTransport, MemoryOAuthProvider, signInAndConnect, startCallbackServer, type CallbackServer } from '../helpers/mcp-oauth.ts';
import { assertSvcSearchV1 } from '../helpers/search-schema.ts';
import { ledgerRows, relaxedLimits } from '../integration/gateway/harness.ts';
import { ensureBuilt, launchChromium, openPage, resultsDir, signUpOnPage } from './identity-browser.ts';

let testApp: TestApp;
let mode: Awaited<ReturnType<typeof realMode>>;
let browser: Browser;
let searxng: ScriptedSearxng;
let callback: CallbackServer;

beforeAll(async () => {
  await ensureBuilt();
  searxng = await startScriptedSearxng();
  mode = await realMode();
  testApp = await startApp(mode.config, { config: { ...relaxedLimits, search: { provider: 'searxng', searxng: { url: searxng.url, timeoutMs: 2000 }, maxResults: 10, cacheSeconds: 0 } } });
  browser = await launchChromium();
  callback = await startCallbackServer();
});

afterAll(async () => {
  await browser?.close();
  await callback?.close();
  await testApp?.close();
  await searxng?.close();
  await mode?.cleanup();
});

/** Opens the authorize URL in the page and clicks `button` on the consent card; returns where the client's callback was reached. */
async function consentOnPage(page: Page, provider: MemoryOAuthProvider, button: 'Approve' | 'Deny', before?: () => Promise<void>): Promise<URL> {
  await page.goto(provider.authorizationUrl!.href);
  await before?.();
  await page.getByTestId('oauth-card').waitFor();
  const landed = callback.next(provider.expectedState);
  await page.getByRole('button', { name: button }).click();
  // Bounded by a timer of its own (a page that is stuck may not answer either), saying what it showed if it can.
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const silent = new Promise<string>((resolve) => setTimeout(() => resolve('(the page did not answer)'), 5_000));
      const said = Promise.race([page.locator('body').innerText({ timeout: 5_000 }).catch(() => '(the page did not answer)'), silent]);
      void said.then((text) => reject(new Error(`the browser did not reach the callback within 30 s; the page shows: ${text.slice(0, 500)}`)));
    }, 30_000);
  });
  try {
    return await Promise.race([landed, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

describe('the consent page', () => {
  it('signs the member in, shows the client, host and access, approves on click; the SDK client then lists and calls web_search; another client is denied by click', async () => {
    const { page, context, problems } = await openPage(browser, testApp.url);
    const email = `e2e-mcp-oauth-${Date.now()}@example.com`;
    try {
      const provider = new MemoryOAuthProvider(callback.url, 'Claude Code (e2e)');
      const client = await signInAndConnect(testApp.url, provider, () =>
        consentOnPage(page, provider, 'Approve', async () => {
          await page.getByText('Sign in first to review this request.').waitFor();
          await signUpOnPage(page, testApp.url, email);
          await page.getByTestId('oauth-card').waitFor();
          expect(await page.getByTestId('oauth-client').textContent()).toBe('Claude Code (e2e)');
          expect(await page.getByTestId('oauth-redirect-host').textContent()).toBe(new URL(callback.url).host);
          await page.getByText(`Signed in as ${email}.`).waitFor();
          await page.getByText('Each call is billed to your plan').waitFor();
          await page.screenshot({ path: resolve(resultsDir, 'mcp-oauth-consent.png'), fullPage: true });
        }),
      );
      await page.getByText('You can close this window.').waitFor();
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['web_search']);
      const result = await client.callTool({ name: 'web_search', arguments: { query: 'consent page e2e' } });
      assertSvcSearchV1(result.structuredContent);
      await client.close();
      const account = (await mode.database.query(`select id from account where email = $1`, [email])).rows[0] as { id: string };
      expect(await ledgerRows(mode.database, account.id, 1)).toHaveLength(1);

      // The account page lists the client with the sessions, and revokes it.
      await page.goto('/account');
      const row = page.getByRole('row').filter({ hasText: 'Claude Code (e2e)' });
      await row.waitFor();
      expect(await row.innerText()).toContain('MCP client');
      await page.screenshot({ path: resolve(resultsDir, 'mcp-oauth-sessions.png'), fullPage: true });
      page.once('dialog', (dialog) => void dialog.accept());
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.waitFor({ state: 'detached' });
      const refused = await fetch(`${testApp.url}/v1/mcp`, { headers: { authorization: `Bearer ${provider.saved!.access_token}` } });
      expect(refused.status).toBe(401);

      // Another client, denied by click: the browser goes back to it with error=access_denied, its state and no code.
      const denied = new MemoryOAuthProvider(callback.url, 'Denied client');
      await expect(new Client({ name: 'deny', version: '1' }).connect(mcpTransport(testApp.url, denied))).rejects.toThrow();
      const landed = await consentOnPage(page, denied, 'Deny');
      expect(landed.searchParams.get('error')).toBe('access_denied');
      expect(landed.searchParams.get('state')).toBe(denied.expectedState);
      expect(landed.searchParams.get('code')).toBeNull();
      // The browser finishes arriving before the context closes: closing mid-navigation can hang Chromium's close.
      await page.getByText('You can close this window.').waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000); // a sign-up (argon2) and three browser round trips: room for a loaded CI machine

  it('cannot be framed by another site (clickjacking)', async () => {
    const response = await fetch(`${testApp.url}/oauth/consent?request=00000000-0000-4000-8000-000000000000`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
  });

  it('explains a request from an unknown client on the page instead of redirecting', async () => {
    const { page, context } = await openPage(browser, testApp.url);
    try {
      await page.goto(`/oauth/authorize?response_type=code&client_id=00000000-0000-4000-8000-000000000000&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`);
      await page.getByTestId('oauth-error').waitFor();
      expect(new URL(page.url()).origin).toBe(testApp.url);
      expect(await page.getByTestId('oauth-error').textContent()).toContain('started by a client svc does not know');
    } finally {
      await context.close();
    }
  });
});

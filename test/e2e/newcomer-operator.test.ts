/**
 * The new operator's first ten minutes, as the README has them (issue 49 items 3–4): svc running on the
 * embedded database with `svc.config.example.yaml` as its config file; `svc admin create-user` in another
 * terminal makes the first admin while the server runs (the server does it: PGlite allows one process);
 * the admin signs in at /admin in Chromium and is told that no model server is configured; `svc login`
 * is approved in the same browser and `svc models` prints the catalogue as a table. Screenshots at 375, 768
 * and 1280 px, and the CLI's output, go to test-results/newcomer-operator-* (not committed).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { mergeDeep } from '../../server/config/merge.ts';
import { embeddedMode, startApp, type TestApp } from '../helpers/app.ts';
import { uniqueEmail } from '../helpers/browser.ts';
import { ensureBuilt, launchChromium, repoRoot, resultsDir } from './identity-browser.ts';

const widths = [375, 768, 1280] as const;
const mode = embeddedMode();
const configHome = mkdtempSync(join(tmpdir(), 'svc-operator-cli-'));
let app: TestApp;
let browser: Browser;
let configFile: string;

beforeAll(async () => {
  await ensureBuilt();
  // The example config, as an operator copies it: every key at its default.
  const example = parseYaml(readFileSync(resolve(repoRoot, 'svc.config.example.yaml'), 'utf8')) as Record<string, unknown>;
  app = await startApp(mergeDeep(example, mode.config), { config: { auth: { devicePollIntervalSeconds: 1 } } });
  configFile = join(mode.dataDir, 'svc.yaml');
  writeFileSync(configFile, `database:\n  dataDir: ${mode.dataDir}\n`);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await mode.cleanup();
  rmSync(configHome, { recursive: true, force: true });
});

/** `node bin/svc.js …` in another terminal: the same config file, its own credentials directory. */
function svc(args: string[], input: string | null, onStdout?: (text: string) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin/svc.js'), ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', SVC_CONFIG: configFile, HOME: configHome, XDG_CONFIG_HOME: configHome, SVC_BASE_URL: app.url },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      onStdout?.(stdout);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
    if (input === null) child.stdin.end();
    else child.stdin.end(input);
  });
}

async function shots(page: Page, name: string): Promise<void> {
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(100);
    await page.screenshot({ path: resolve(resultsDir, `newcomer-operator-${name}-${width}.png`), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} at ${width} px is wider than the screen`).toBe(0);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe('a new operator', () => {
  it('creates the first admin while svc runs, signs in to /admin, logs the CLI in and lists the models', async () => {
    const email = uniqueEmail('operator');
    const created = await svc(['admin', 'create-user', '--email', email, '--role', 'admin'], 'the first admin password\n');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('The embedded database is held by the running svc, so it did this for you.');

    const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: app.url, locale: 'en' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    try {
      await page.goto('/admin');
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByLabel('Password', { exact: true }).fill('the first admin password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Dashboard' }).waitFor({ timeout: 15_000 });
      await page.getByRole('alert').filter({ hasText: 'No model server is configured' }).waitFor({ timeout: 15_000 });
      await shots(page, 'admin');

      let approved: Promise<void> | null = null;
      const login = await svc(['login', '--client', 'operator laptop'], null, (stdout) => {
        const match = /open (\S+)\s+and check that it shows the code ([A-Z]{4}-[A-Z]{4})/.exec(stdout);
        if (!match || approved) return;
        approved = (async () => {
          await page.goto(new URL(match[1]!).pathname + new URL(match[1]!).search);
          await page.getByTestId('device-card').waitFor({ timeout: 15_000 });
          expect(await page.getByTestId('device-code').textContent()).toBe(match[2]);
          await shots(page, 'device');
          await page.getByRole('button', { name: 'Approve' }).click();
          await page.getByText('Approved. You can close this page').waitFor();
        })();
      });
      await approved;
      expect(login.code).toBe(0);
      expect(login.stdout).toContain(`Signed in as ${email}.`);

      const models = await svc(['models'], null);
      expect(models.code).toBe(0);
      writeFileSync(resolve(resultsDir, 'newcomer-operator-svc-models.txt'), models.stdout);
      const lines = models.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID +NAME +KIND +CLASS +INPUT USD\/1M +OUTPUT USD\/1M +CONTEXT +MAX OUTPUT$/);
      expect(lines.find((line) => line.startsWith('auto '))).toMatch(/^auto +Auto +chat +fast +0\.042 +0\.084 +131072 +8192$/);
      expect(lines.find((line) => line.startsWith('svc-2.1-search '))).toMatch(/^svc-2\.1-search +svc 2\.1 Search +search +premium +0\.10875 +0\.2175 +— +8192$/);
      expect(lines.find((line) => line.startsWith('svc-tts '))).toMatch(/^svc-tts +svc TTS +speech +fast /);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

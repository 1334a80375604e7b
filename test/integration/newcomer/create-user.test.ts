/**
 * `svc admin create-user` while `npm start` runs on the embedded database (issue 49 item 3). PGlite allows
 * one process per data directory, so the command asks the running server instead, over its loopback-only
 * channel: a secret in `<dataDir>/local-admin.json` (mode 0600) as a bearer token. Without that way in it
 * says plainly to stop the server first. The channel answers nobody else: no token, a wrong one, or a
 * request relayed by a proxy gets the same 404 as an unknown route.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedMode, startApp, type TestApp } from '../../helpers/app.ts';
import { Browser, uniqueEmail } from '../../helpers/browser.ts';
import { seed } from '../../helpers/seed.ts';

const repo = resolve(import.meta.dirname, '../../..');
const mode = embeddedMode();
let app: TestApp;
let configFile: string;
const handlePath = () => join(mode.dataDir, 'local-admin.json');

beforeAll(async () => {
  app = await startApp(mode.config);
  configFile = join(mode.dataDir, 'svc.yaml');
  writeFileSync(configFile, `database:\n  dataDir: ${mode.dataDir}\n`);
});

afterAll(async () => {
  await app?.close();
  await mode.cleanup();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/svc.js …` as an operator runs it beside the server: same config file, stdin piped. */
function svc(args: string[], input: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, 'bin/svc.js'), ...args], { cwd: repo, env: { PATH: process.env.PATH ?? '', SVC_CONFIG: configFile, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('svc admin create-user while svc runs on the embedded database', () => {
  it('goes through the running server: the admin exists and signs in with the piped password', async () => {
    const email = uniqueEmail('first-admin');
    const run = await svc(['admin', 'create-user', '--email', email, '--role', 'admin'], 'first admin password\n');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('The embedded database is held by the running svc, so it did this for you.');
    expect(run.stdout).toMatch(new RegExp(`Created ${email.replace(/[.+]/g, '\\$&')} with role admin \\(id [0-9a-f-]{36}\\)\\.`));
    const browser = new Browser(app.url);
    const signedIn = await browser.fetch('/api/membership/auth/login', { body: { email, password: 'first admin password' } });
    expect(signedIn.status).toBe(200);
    expect(((await signedIn.json()) as { account: { role: string } }).account.role).toBe('admin');
    const audit = await browser.graphql<{ auditLog: { nodes: { action: string; reason: string }[] } }>('{ auditLog(first: 5) { nodes { action reason } } }');
    expect(audit.data?.auditLog.nodes[0]).toEqual({ action: 'admin:create-user', reason: 'svc admin create-user (through the running server)' });
  });

  it('with --email-code, shows the code the server kept (no SMTP), which staff also find in the outbox', async () => {
    const email = uniqueEmail('support-by-code');
    const run = await svc(['admin', 'create-user', '--email', email, '--role', 'support', '--email-code'], '', { LANG: 'zh_CN.UTF-8' });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('内置数据库正由运行中的 svc 使用，已由它代为完成此操作。');
    const code = /登录验证码为 (\d{6})/.exec(run.stdout)?.[1];
    expect(code).toMatch(/^\d{6}$/);
    const staff = await seed(app).staff('support');
    const outbox = await staff.web.graphql<{ devOutbox: { mails: { to: string; text: string }[] } }>('{ devOutbox { mails { to text } } }');
    expect(outbox.data?.devOutbox.mails[0]?.to).toBe(email);
    expect(outbox.data?.devOutbox.mails[0]?.text).toContain(code);
  });

  it('the way in is a file only this user can read, and the channel answers nobody without its secret', async () => {
    expect(statSync(handlePath()).mode & 0o777).toBe(0o600);
    const handle = JSON.parse(readFileSync(handlePath(), 'utf8')) as { pid: number; port: number; token: string };
    expect(handle.pid).toBe(process.pid);
    expect(handle.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const body = JSON.stringify({ email: uniqueEmail('intruder'), password: 'an intruder password', role: 'admin', emailCode: false });
    const post = (headers: Record<string, string>) => fetch(`${app.url}/api/local-admin/create-user`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const refused: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${handle.token}`, 'x-forwarded-for': '203.0.113.9' }];
    for (const headers of refused) {
      const response = await post(headers);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe('not_found');
    }
    expect((await post({ authorization: `Bearer ${handle.token}` })).status).toBe(200);
  });

  it('without the way in, says to stop the server first, in the terminal\'s language', async () => {
    const saved = readFileSync(handlePath());
    rmSync(handlePath());
    try {
      const email = uniqueEmail('blocked');
      const english = await svc(['admin', 'create-user', '--email', email, '--role', 'admin'], 'blocked password\n');
      expect(english.code).toBe(1);
      expect(english.stdout).toBe('');
      expect(english.stderr).toContain(`is held by a running svc (process ${process.pid})`);
      expect(english.stderr).toContain('Stop that server first (Ctrl-C where it runs), run this command again');
      expect(english.stderr).toContain('DATABASE_URL');
      const chinese = await svc(['admin', 'create-user', '--email', email, '--role', 'admin'], 'blocked password\n', { LANG: 'zh_CN.UTF-8' });
      expect(chinese.stderr).toContain('请先停止该服务器');
      const browser = new Browser(app.url);
      expect((await browser.fetch('/api/membership/auth/login', { body: { email, password: 'blocked password' } })).status).toBe(401);
    } finally {
      writeFileSync(handlePath(), saved, { mode: 0o600 });
    }
  });
});

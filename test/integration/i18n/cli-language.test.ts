/**
 * The `svc` command speaks the terminal's language (a child process, as a user runs it): LANG, LC_ALL or
 * LC_MESSAGES set to zh_CN.UTF-8 give Chinese — its own lines, and the server's errors from `messageZh`;
 * anything else gives English.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { testRedisUrl } from '../../helpers/env.ts';
import { Browser, sleep, uniqueEmail } from '../../helpers/browser.ts';

const repo = resolve(import.meta.dirname, '../../..');
let setup: Awaited<ReturnType<typeof realMode>>;
let server: TestApp;

beforeAll(async () => {
  setup = await realMode();
  server = await startApp(setup.config, { config: { auth: { devicePollIntervalSeconds: 1 } } });
});

afterAll(async () => {
  await server?.close();
  await setup?.cleanup();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function svc(args: string[], env: Record<string, string>, onStdout?: (text: string) => void, stdin?: string): Promise<Run> {
  const home = mkdtempSync(join(tmpdir(), 'svc-cli-lang-'));
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, 'bin/svc.ts'), ...args], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: env.XDG_CONFIG_HOME ?? home, SVC_BASE_URL: server.url, ...env },
    });
    child.stdin.end(stdin ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      onStdout?.(stdout);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

const zh = { LANG: 'zh_CN.UTF-8' };

describe('svc in the terminal’s language', () => {
  it('prints its usage in Chinese for zh_CN.UTF-8 and in English otherwise', async () => {
    expect((await svc(['--help'], zh)).stdout).toMatch(/^用法：\n {2}svc login .*通过设备码让这台机器登录/);
    // Which variable wins is unit-tested (test/unit/i18n/locale.test.ts); here, that the CLI uses it.
    expect((await svc(['--help'], { LC_ALL: 'C', LANG: 'zh_CN.UTF-8' })).stdout).toMatch(/^usage:\n {2}svc login .*sign this machine in by device code/);
    const unknown = await svc(['frobnicate'], zh);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^未知命令：frobnicate\n用法：/);
  });

  it('logs in, says who is signed in and signs out in Chinese', async () => {
    const browser = new Browser(server.url);
    const email = uniqueEmail('cli-zh');
    await browser.signUp(email);
    const configHome = mkdtempSync(join(tmpdir(), 'svc-cli-zh-'));
    const env = { ...zh, XDG_CONFIG_HOME: configHome };
    let approved: Promise<unknown> | null = null;
    const login = await svc(['login', '--client', 'svc-cli 测试'], env, (stdout) => {
      const match = /请在浏览器中打开 (\S+) 进行登录，\n并确认页面上显示的代码是 ([A-Z]{4}-[A-Z]{4})。正在等待批准…/.exec(stdout);
      if (match && !approved) {
        expect(match[1]).toBe(`${server.url}/device?user_code=${match[2]}`);
        approved = sleep(300).then(() => browser.graphql('mutation($c: String!) { approveDevice(userCode: $c) { state } }', { c: match[2] }));
      }
    });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`已登录为 ${email}。`);
    expect((await svc(['whoami'], env)).stdout).toBe(`${email}（套餐 免费版，角色 member），服务器 ${server.url}\n`);
    expect((await svc(['logout'], env)).stdout).toBe('已退出登录，会话令牌已撤销。\n');
    const after = await svc(['whoami'], env);
    expect(after.code).toBe(1);
    expect(after.stderr).toBe('svc: 尚未登录，请运行 `svc login`。\n');
  });

  it("shows the server's own errors in Chinese (messageZh), with their values", async () => {
    const tooLong = 'x'.repeat(101);
    const zhRun = await svc(['login', '--client', tooLong], zh);
    expect(zhRun.code).toBe(1);
    expect(zhRun.stderr).toBe('svc: 无法发起登录：client 最多 100 个字符。\n');
    const enRun = await svc(['login', '--client', tooLong], { LANG: 'en_GB.UTF-8' });
    expect(enRun.stderr).toBe('svc: could not start login: client must be at most 100 characters.\n');
  });

  it('admin create-user reports a service error in Chinese too', async () => {
    const env = { ...zh, DATABASE_URL: setup.database.url, REDIS_URL: testRedisUrl, SVC_CONFIG: '' };
    // The password comes on stdin, never in argv.
    const bad = await svc(['admin', 'create-user', '--email', uniqueEmail('cli-zh-admin')], env, undefined, 'x\n');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('svc: 密码至少需要 8 个字符。\n');
    const refused = await svc(['admin', 'create-user', '--email', uniqueEmail('cli-zh-admin'), '--password', 'x'], env);
    expect(refused.stderr).toMatch(/^svc: 不接受 --password/);
    const created = await svc(['admin', 'create-user', '--email', uniqueEmail('cli-zh-admin'), '--role', 'support'], env, undefined, 'staff password 1\n');
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(/^已创建用户 \S+@example\.com，角色为 support（ID [0-9a-f-]{36}）。\n$/);
  });
});

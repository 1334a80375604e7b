/**
 * The `svc` command as a user runs it (a child process on Node 24): `login` by device code with the token
 * stored 0600 under XDG_CONFIG_HOME, `whoami`, `models`, `keys` (limits), `alerts`, `credits`, `export`, `logout` (revoked on the server), and
 * `admin create-user` straight against the database.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { testRedisUrl } from '../../helpers/env.ts';
import { Browser, sleep, uniqueEmail } from '../../helpers/browser.ts';

const repo = resolve(import.meta.dirname, '../../..');
let setup: Awaited<ReturnType<typeof realMode>>;
let server: TestApp;
const configHome = mkdtempSync(join(tmpdir(), 'svc-cli-'));

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

function svc(args: string[], env: Record<string, string> = {}, onStdout?: (text: string) => void): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, 'bin/svc.ts'), ...args], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '', HOME: configHome, XDG_CONFIG_HOME: configHome, SVC_BASE_URL: server.url, ...env },
    });
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

/** `node bin/svc.js …` (the installed launcher), with `input` written to its stdin and then closed. */
function launcher(args: string[], env: Record<string, string>, input: string): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, 'bin/svc.js'), ...args], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '', HOME: configHome, XDG_CONFIG_HOME: configHome, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A new member, and a CLI home signed in as them by device login (approved from their browser session). */
async function signedInCli(name: string): Promise<Record<string, string>> {
  const home = mkdtempSync(join(tmpdir(), `svc-${name}-`));
  const env = { HOME: home, XDG_CONFIG_HOME: home };
  const browser = new Browser(server.url);
  await browser.signUp(uniqueEmail(name));
  let approved: Promise<unknown> | null = null;
  const login = await svc(['login'], env, (stdout) => {
    const match = /code ([A-Z]{4}-[A-Z]{4})/.exec(stdout);
    if (match && !approved) approved = sleep(300).then(() => browser.graphql('mutation($c: String!) { approveDevice(userCode: $c) { state } }', { c: match[1] }));
  });
  expect(login.code).toBe(0);
  return env;
}

describe('svc CLI', () => {
  it('login by device code, whoami, models, logout', async () => {
    const browser = new Browser(server.url);
    const email = uniqueEmail('cli');
    await browser.signUp(email);
    let approved: Promise<unknown> | null = null;
    const run = await svc(['login', '--client', 'svc-cli test'], {}, (stdout) => {
      const match = /open (\S+)\s+and check that it shows the code ([A-Z]{4}-[A-Z]{4})/.exec(stdout);
      if (match && !approved) {
        expect(match[1]).toBe(`${server.url}/device?user_code=${match[2]}`);
        approved = sleep(300).then(() => browser.graphql('mutation($c: String!) { approveDevice(userCode: $c) { state } }', { c: match[2] }));
      }
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Signed in as ${email}.`);
    const file = join(configHome, 'svc', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(configHome, 'svc')).mode & 0o777).toBe(0o700);
    const { token } = JSON.parse(readFileSync(file, 'utf8')) as { token: string };
    expect(token).toMatch(/^svc_sess_/);

    const who = await svc(['whoami']);
    expect(who.stdout).toContain(`${email} (plan Free, role member) at ${server.url}`);
    const listed = await svc(['models']);
    expect(listed.code).toBe(0);
    // A table: each model the account may use, with its name, kind, class, prices (currency named) and limits.
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +KIND +CLASS +INPUT USD\/1M +OUTPUT USD\/1M +CONTEXT +MAX OUTPUT$/);
    const ids = server.app.services.models.ids;
    expect(lines.slice(1, 1 + ids.length).map((line) => line.split(' ')[0])).toEqual(ids);
    expect(lines.find((line) => line.startsWith('svc-2.1-fast '))).toMatch(/^svc-2\.1-fast +svc 2\.1 Fast +chat +fast +0\.042 +0\.084 +131072 +8192$/);
    expect(lines.find((line) => line.startsWith('svc-img '))).toMatch(/^svc-img +svc Image +image +premium +0\.10875 +0\.2175 +— +—$/);
    expect(lines.at(-1)).toBe('Prices in USD per 1,000,000 tokens, after the current promotion; context and max output in tokens.');

    const out = await svc(['logout']);
    expect(out.stdout).toContain('the session token is revoked');
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    const after = await svc(['whoami']);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('not signed in');
  });

  it('keys create with limits, list with spend vs caps, update (none lifts a limit), revoke — in en and zh-CN', async () => {
    const env = await signedInCli('cli-keys');

    const created = await svc(['keys', 'create', '--name', 'ci', '--budget-day', '5', '--budget-month', '50', '--rpm', '30', '--models', 'svc-2.1-fast,svc-2.1', '--expires', '2099-01-31'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const token = /shown this once\): (svc_live_\S+)/.exec(created.stdout)?.[1];
    expect(token).toBeTruthy();
    expect(created.stdout).toContain('today 0.00/5.00 USD; this month 0.00/50.00 USD; rpm 30; models svc-2.1-fast,svc-2.1; expires 2099-02-01T00:00:00.000Z');
    const id = /^([0-9a-f-]{36}) {2}ci /m.exec(created.stdout)![1]!;

    const updated = await svc(['keys', 'update', id, '--budget-day', 'none', '--rpm', '1000000'], env);
    expect(updated.code).toBe(1);
    expect(updated.stderr).toMatch(/requestsPerMinute 1000000 is above your plan's limit/);
    const lifted = await svc(['keys', 'update', id, '--budget-day', 'none', '--models', 'none'], { ...env, LANG: 'zh_CN.UTF-8' });
    expect(lifted.code).toBe(0);
    expect(lifted.stdout).toContain('今日 0.00 USD；本月 0.00/50.00 USD；每分钟请求 30；模型 套餐内全部');

    const listed = await svc(['keys', 'list'], env);
    expect(listed.stdout).toContain(`${id}  ci  ${token!.slice(0, 12)}…${token!.slice(-4)}`);
    // The key works under its limits.
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const revoked = await svc(['keys', 'revoke', id], env);
    expect(revoked.stdout).toContain(`Key ${id} is revoked.`);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  }, 300_000);

  it('alerts: list the meters with their thresholds, set and turn off a meter, email off, deliveries — in en and zh-CN', async () => {
    const env = await signedInCli('cli-alerts');
    const listed = await svc(['alerts'], env);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const fastDay = listed.stdout.split('\n').find((line) => / 0\.00\/\d+\.\d{2} USD {2}80%, 100%$/.test(line));
    expect(fastDay, listed.stdout).toBeTruthy();
    expect(listed.stdout).toContain('email on; webhook none');
    const meter = fastDay!.split('  ')[0]!;

    const set = await svc(['alerts', 'set', meter, '50,90'], env);
    expect(set.code).toBe(0);
    expect(set.stdout.split('\n').find((line) => line.startsWith(`${meter}  `))).toMatch(/ 50%, 90%$/);
    const refused = await svc(['alerts', 'set', meter, '0,150'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^svc: alerts: Thresholds are whole percentages/);

    const off = await svc(['alerts', 'set', meter, 'none'], { ...env, LANG: 'zh_CN.UTF-8' });
    expect(off.code).toBe(0);
    expect(off.stdout.split('\n').find((line) => line.startsWith(`${meter}  `))).toMatch(/ 关闭$/);
    const email = await svc(['alerts', 'email', 'off'], { ...env, LANG: 'zh_CN.UTF-8' });
    expect(email.stdout).toContain('邮件关闭；Webhook 未设置');

    const deliveries = await svc(['alerts', 'deliveries'], env);
    expect(deliveries.stdout).toContain('No alert emails or webhooks sent yet');
    const noHook = await svc(['alerts', 'test'], env);
    expect(noHook.code).toBe(1);
    expect(noHook.stderr).toMatch(/^svc: alerts: /);
    const usage = await svc(['alerts', 'bogus'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: svc alerts');
  }, 300_000);

  it('credits: codes minted on the database, one redeemed, the balance and entries listed; exports stream CSV', async () => {
    const env = await signedInCli('cli-credits');
    const onDatabase = { DATABASE_URL: setup.database.url, REDIS_URL: testRedisUrl, SVC_CONFIG: '' };
    const minted = await svc(['credits', 'mint', '--value', '5', '--count', '2', '--note', 'cli test'], onDatabase);
    expect(minted.stderr).toMatch(/^Minted 2 codes of 5\.00 USD \(batch [0-9a-f-]{36}\)/);
    expect(minted.code).toBe(0);
    const [header, ...codes] = minted.stdout.trim().split('\r\n'); // CSV lines end in CRLF (RFC 4180)
    expect(header).toBe('code,value,currency,uses_left,expires_at,note');
    expect(codes).toHaveLength(2);
    const code = codes[0]!.split(',')[0]!;

    const redeemed = await svc(['credits', 'redeem', code], env);
    expect(redeemed.stdout.trim()).toBe('Redeemed: +5.00 USD. Credit now 5.00 USD.');
    const again = await svc(['credits', 'redeem', code], env);
    expect(again.code).toBe(1);
    const shown = await svc(['credits'], env);
    expect(shown.stdout).toContain('Credit: 5.00 USD.');
    expect(shown.stdout.split('\n').find((line) => / code +5\.00 +5\.00/.test(line))).toBeTruthy();

    const today = new Date().toISOString().slice(0, 10);
    const csv = await svc(['export', 'credits', '--from', today, '--to', today], env);
    expect(csv.code).toBe(0);
    const lines = csv.stdout.trim().split('\r\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/,code,/);
    expect(lines[1]).toContain('5.00');
    const usage = await svc(['export', 'usage', '--from', today, '--to', today], env);
    expect(usage.code).toBe(0);
    expect(usage.stdout.trim().split('\r\n')).toHaveLength(1); // the header: no requests yet
    const wrong = await svc(['export', 'usage', '--from', today], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('usage: svc export usage|payments|credits');
  }, 300_000);

  it('says how to point it elsewhere when the server cannot be reached, and --help shows how', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await svc(['login'], { SVC_BASE_URL: nobody });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`cannot reach ${nobody} (connection refused)`);
    expect(unreachable.stderr).toContain('--base-url URL or SVC_BASE_URL=URL');
    const help = await svc(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--base-url URL, or the environment variable SVC_BASE_URL');
  });

  it('admin create-user bootstraps staff that can sign in, the password piped on stdin', async () => {
    const email = uniqueEmail('admin');
    const env = { DATABASE_URL: setup.database.url, REDIS_URL: testRedisUrl, SVC_CONFIG: '' };
    const created = await launcher(['admin', 'create-user', '--email', email, '--role', 'admin'], env, 'staff password 1\n');
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(new RegExp(`Created ${email} with role admin`));
    const browser = new Browser(server.url);
    const login = await browser.fetch('/api/membership/auth/login', { body: { email, password: 'staff password 1' } });
    expect(await login.json()).toMatchObject({ ok: true, account: { email, role: 'admin' } });

    const bad = await launcher(['admin', 'create-user', '--email', email], env, 'x\n');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('password must be at least 8 characters');
  });
});

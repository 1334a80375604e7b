/**
 * The `svc` command as a user runs it (a child process on Node 24): `login` by device code with the token
 * stored 0600 under XDG_CONFIG_HOME, `whoami`, `models`, `logout` (revoked on the server), and
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
    expect(who.stdout).toContain(`${email} (plan free, role member) at ${server.url}`);
    const listed = await svc(['models']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual(server.app.services.models.ids);

    const out = await svc(['logout']);
    expect(out.stdout).toContain('the session token is revoked');
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    const after = await svc(['whoami']);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('not signed in');
  });

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

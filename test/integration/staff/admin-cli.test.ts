/**
 * `svc admin create-user` (DESIGN §8.2 staff bootstrap) as an operator runs it, `node bin/svc.js …`: the
 * password never comes from argv (`--password` is refused and says why); it is read from stdin when piped
 * (see cli.test.ts), typed at a prompt without echo on a terminal, or replaced by an email sign-in code.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { testRedisUrl } from '../../helpers/env.ts';
import { Browser, uniqueEmail } from '../../helpers/browser.ts';

const repo = resolve(import.meta.dirname, '../../..');
let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;

beforeAll(async () => {
  setup = await realMode();
  app = await startApp(setup.config);
});

afterAll(async () => {
  await app?.close();
  await setup?.cleanup();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function env(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', DATABASE_URL: setup.database.url, REDIS_URL: testRedisUrl, SVC_CONFIG: '' };
}

/** Runs `command` with `onOutput` seeing stdout as it grows (to answer prompts). */
function run(command: string, args: string[], onOutput: (stdout: string, write: (text: string) => void) => void = () => undefined, input?: string): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: repo, env: env() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      onOutput(stdout, (text) => child.stdin.write(text));
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
    if (input !== undefined) child.stdin.end(input);
  });
}

const svc = (args: string[], input?: string) => run(process.execPath, [join(repo, 'bin/svc.js'), ...args], undefined, input);

async function accountRow(email: string): Promise<{ role: string; password_hash: string | null } | undefined> {
  const { rows } = await setup.database.query('select role, password_hash from account where email = $1', [email]);
  return rows[0];
}

const hasScript = spawnSync('script', ['--version']).status === 0;

describe('svc admin create-user', () => {
  it('refuses --password, saying why, and creates nothing', async () => {
    const email = uniqueEmail('argv');
    for (const args of [['--password', 'hunter2 hunter2'], ['--password=hunter2 hunter2']]) {
      const result = await svc(['admin', 'create-user', '--email', email, '--role', 'admin', ...args], 'hunter2 hunter2\n');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('--password is not accepted');
      expect(result.stderr).toContain('(ps)');
      expect(result.stderr).toContain('shell history');
      expect(result.stdout).toBe('');
    }
    expect(await accountRow(email)).toBeUndefined();
  });

  it('says so when stdin is piped but empty', async () => {
    const email = uniqueEmail('empty');
    const result = await svc(['admin', 'create-user', '--email', email], '');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no password on stdin');
    expect(await accountRow(email)).toBeUndefined();
  });

  it('--email-code creates the account without a password and sends a sign-in code that works', async () => {
    const email = uniqueEmail('code');
    const result = await svc(['admin', 'create-user', '--email', email, '--role', 'support', '--email-code']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Created ${email} with role support`);
    // No SMTP in tests: the code went to the development outbox, so the command shows it.
    const code = /The sign-in code is (\d{6})/.exec(result.stdout)?.[1];
    expect(code).toMatch(/^\d{6}$/);
    expect(await accountRow(email)).toEqual({ role: 'support', password_hash: null });

    const browser = new Browser(app.url);
    const verified = await browser.fetch('/api/membership/auth/email-code/verify', { body: { email, code } });
    expect(await verified.json()).toMatchObject({ ok: true, account: { email, role: 'support', hasPassword: false, emailVerified: true } });
    expect((await browser.graphql<{ me: { viewerCanManageAccounts: boolean } }>('{ me { viewerCanManageAccounts } }')).data?.me.viewerCanManageAccounts).toBe(true);

    const { rows } = await setup.database.query("select actor_id, after, reason from audit_log where action = 'admin:create-user' and target_id = (select id::text from account where email = $1)", [email]);
    expect(rows).toEqual([{ actor_id: null, after: { role: 'support', password: 'unchanged', emailCode: true }, reason: 'svc admin create-user' }]);
  });

  it.skipIf(!hasScript)('at a terminal, asks twice without echoing the password', async () => {
    const email = uniqueEmail('tty');
    const password = 'typed at the prompt 7';
    // `script` gives the command a real terminal; answers are typed only once each prompt is shown.
    let answered = 0;
    const result = await run('script', ['-qec', `node bin/svc.js admin create-user --email ${email} --role admin`, '/dev/null'], (stdout, write) => {
      const prompts = (stdout.match(/Password: |Repeat the password: /g) ?? []).length;
      while (answered < prompts) {
        answered += 1;
        write(`${password}\r`);
      }
    });
    expect(result.stdout).toContain('Password: ');
    expect(result.stdout).toContain('Repeat the password: ');
    expect(result.stdout).toContain(`Created ${email} with role admin`);
    expect(result.stdout).not.toContain(password);
    expect(result.code).toBe(0);
    const login = await new Browser(app.url).fetch('/api/membership/auth/login', { body: { email, password } });
    expect(await login.json()).toMatchObject({ ok: true, account: { email, role: 'admin' } });
  });
});

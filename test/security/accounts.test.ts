/**
 * Issue 15 item 8: secrets stay out of the logs, guessable passwords are refused, and a client that leaves
 * mid-request is not logged as a server error. Real PostgreSQL and Redis.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { Browser, mailedCode, uniqueEmail } from '../helpers/browser.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
const lines: string[] = [];

beforeAll(async () => {
  mode = await realMode();
  app = await startApp(mode.config, { logLines: lines, config: { auth: { throttle: { signUpPerHourPerIp: 1000, signUpPerHourPerDomain: 1000 } } } });
});
afterAll(async () => {
  await app?.close();
  await mode?.cleanup();
});

describe('sign-in codes without SMTP', () => {
  it('are kept in the outbox and logged as sent, never with the code', async () => {
    const email = uniqueEmail('code-log');
    const response = await new Browser(app.url).fetch('/api/membership/auth/email-code/start', { body: { email } });
    expect(response.status).toBe(200);
    const code = /\b(\d{6})\b/.exec(app.app.services.mailer.lastTo(email)!.text)![1]!;
    const logged = lines.join('\n');
    expect(logged).toContain('development outbox');
    expect(logged).not.toContain(code);
  });
});

describe('passwords', () => {
  it.each([
    ['aaaaaaaa', /too easy to guess/],
    ['password', /too easy to guess/],
    ['12345678', /too easy to guess/],
    ['qwertyuiop', /too easy to guess/],
  ])('refuses %s', async (password, message) => {
    const response = await new Browser(app.url).fetch('/api/membership/auth/signup', { body: { email: uniqueEmail('weak'), password } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; message: string; messageZh: string; error: { param: string } };
    expect(body).toMatchObject({ code: 'invalid_request', error: { param: 'password' } });
    expect(body.message).toMatch(message);
    expect(body.messageZh).toMatch(/太容易被猜到/);
  });

  it('refuses the email itself, and accepts a phrase', async () => {
    const email = uniqueEmail('self');
    const same = await new Browser(app.url).fetch('/api/membership/auth/signup', { body: { email, password: email } });
    expect(((await same.json()) as { message: string }).message).toMatch(/must not be your email/);
    const phrase = await new Browser(app.url).fetch('/api/membership/auth/signup', { body: { email, password: 'lantern orbit pickle saga' } });
    expect(phrase.status).toBe(202);
  });
});

describe('sign-up does not tell who has an account', () => {
  /** What an observer sees of an answer: status, header names, and the body with this email and time blanked. */
  async function seen(response: Response, email: string) {
    const text = await response.text();
    const body = JSON.parse(text.replaceAll(email, '<email>')) as Record<string, unknown>;
    const data = (body.data as { signUp?: Record<string, unknown> } | undefined)?.signUp;
    if (typeof body.expiresAt === 'string') body.expiresAt = '<time>';
    if (data && typeof data.expiresAt === 'string') data.expiresAt = '<time>';
    const headers = [...response.headers.keys()].filter((name) => name !== 'content-length').sort();
    return { status: response.status, headers, body, cookie: response.headers.getSetCookie() };
  }

  it('answers an existing email exactly as a new one (REST and GraphQL), creates nothing before the code, and mails the owner instead', async () => {
    const owner = new Browser(app.url);
    const taken = uniqueEmail('taken');
    await owner.signUp(taken, 'owner phrase lantern orbit');
    const password = 'squatter phrase pickle saga';

    for (const via of ['rest', 'graphql'] as const) {
      const fresh = uniqueEmail('fresh');
      const ask = (email: string) =>
        via === 'rest'
          ? new Browser(app.url).fetch('/api/membership/auth/signup', { body: { email, password } })
          : new Browser(app.url).fetch('/graphql', { body: { query: 'mutation($e: String!, $p: String!) { signUp(email: $e, password: $p) { email expiresAt } }', variables: { e: email, p: password } } });
      const [existing, created] = [await seen(await ask(taken), taken), await seen(await ask(fresh), fresh)];
      expect(existing, via).toEqual(created);
      expect(existing.status, via).toBe(via === 'rest' ? 202 : 200);
      expect(existing.cookie, via).toEqual([]);

      // The owner is told, with a sign-in code; the new address gets the code that creates its account.
      expect(app.app.services.mailer.lastTo(taken)!.subject).toBe('Someone tried to sign up to svc with your address');
      expect(app.app.services.mailer.lastTo(fresh)!.subject).toMatch(/^Your svc sign-up code: \d{6}$/);
      const { rows } = await mode.database.query('select email from account where email = $1', [fresh]);
      expect(rows).toEqual([]);
    }

    // Nothing about the owner's account changed: their password works, the squatter's does not …
    expect((await new Browser(app.url).fetch('/api/membership/auth/login', { body: { email: taken, password } })).status).toBe(401);
    expect((await new Browser(app.url).fetch('/api/membership/auth/login', { body: { email: taken, password: 'owner phrase lantern orbit' } })).status).toBe(200);
    // … and the code in the owner's mail signs the owner in.
    const again = new Browser(app.url);
    const signedIn = await again.fetch('/api/membership/auth/email-code/verify', { body: { email: taken, code: mailedCode(app.url, taken) } });
    expect(await signedIn.json()).toMatchObject({ ok: true, account: { email: taken, hasPassword: true, emailVerified: true } });
  });

  it('creates the account with the sign-up password only when the emailed code is entered', async () => {
    const email = uniqueEmail('verify-first');
    const browser = new Browser(app.url);
    expect((await browser.fetch('/api/membership/auth/signup', { body: { email, password: 'lantern orbit pickle saga' } })).status).toBe(202);
    expect((await new Browser(app.url).fetch('/api/membership/auth/login', { body: { email, password: 'lantern orbit pickle saga' } })).status).toBe(401);
    const verified = await browser.fetch('/api/membership/auth/email-code/verify', { body: { email, code: mailedCode(app.url, email) } });
    expect(await verified.json()).toMatchObject({ ok: true, account: { email, hasPassword: true, emailVerified: true } });
    expect((await browser.fetch('/api/membership/me')).status).toBe(200);
    expect((await new Browser(app.url).fetch('/api/membership/auth/login', { body: { email, password: 'lantern orbit pickle saga' } })).status).toBe(200);
  });

  it('mails the owner in their language', async () => {
    const email = uniqueEmail('taken-zh');
    await new Browser(app.url).signUp(email, 'owner phrase lantern orbit');
    await mode.database.query(`update account set locale = 'zh-CN' where email = $1`, [email]);
    await new Browser(app.url).fetch('/api/membership/auth/signup', { body: { email, password: 'squatter phrase pickle saga' } });
    expect(app.app.services.mailer.lastTo(email)!.subject).toBe('有人尝试用您的邮箱注册 svc');
  });
});

describe('a client that leaves mid-body', () => {
  it('is logged at debug, not as an error', async () => {
    const before = lines.length;
    await new Promise<void>((resolve) => {
      const socket = connect(Number(new URL(app.url).port), '127.0.0.1', () => {
        socket.write('POST /api/membership/auth/login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"email":');
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 200);
      });
    });
    await expect.poll(() => lines.slice(before).some((line) => line.includes('client went away'))).toBe(true);
    expect(lines.slice(before).filter((line) => /"level":50/.test(line))).toEqual([]);
  });
});

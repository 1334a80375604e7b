/**
 * Issue 15 item 8: secrets stay out of the logs, guessable passwords are refused, and a client that leaves
 * mid-request is not logged as a server error. Real PostgreSQL and Redis.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { Browser, uniqueEmail } from '../helpers/browser.ts';

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
    expect(phrase.status).toBe(201);
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

/**
 * Sign-up without a mail server (issue 49 item 2):
 * - outside production, every mail svc would have sent is kept in the development outbox; staff read it
 *   (`devOutbox`) and watch it live (`devOutboxChanged`) from any instance — the code a member signed up
 *   with on instance A reaches a staff screen on instance B; members cannot read it;
 * - `authProviders` says where codes go (`outbox`, plus `mailLogged`), so the sign-up page can say so;
 * - in production without SMTP a code could reach nobody: sign-up and email codes answer 503
 *   `mail_not_configured` (no Retry-After), `emailCode` is false, nothing is kept; with `mail.logOutbox`
 *   the codes go to the log (`log`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { Browser, uniqueEmail } from '../../helpers/browser.ts';
import { testRedisUrl } from '../../helpers/env.ts';
import { seed } from '../../helpers/seed.ts';
import { cookieClient } from './harness.ts';

const PROVIDERS = '{ authProviders { emailCode mailDelivery mailLogged } }';
const OUTBOX = '{ devOutbox { delivery logged mails { id to subject text sentAt } } }';

interface OutboxMail {
  id: string;
  to: string;
  subject: string;
  text: string;
  sentAt: string;
}

let mode: Awaited<ReturnType<typeof realMode>>;

beforeAll(async () => {
  mode = await realMode();
});

afterAll(async () => {
  await mode?.cleanup();
});

describe('development outbox (no SMTP, not production)', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startApp(mode.config);
    b = await startApp(mode.config);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('says codes go to the outbox, so the sign-up page can tell members where', async () => {
    const answer = await new Browser(a.url).graphql(PROVIDERS);
    expect(answer.data).toEqual({ authProviders: { emailCode: true, mailDelivery: 'outbox', mailLogged: false } });
    const rest = (await (await fetch(`${a.url}/api/membership/auth/providers`)).json()) as Record<string, unknown>;
    expect(rest).toMatchObject({ emailCode: true, mailDelivery: 'outbox' });
    const logged = await startApp(mode.config, { env: { SVC_MAIL_LOG_OUTBOX: '1' } });
    try {
      expect((await new Browser(logged.url).graphql(PROVIDERS)).data).toEqual({ authProviders: { emailCode: true, mailDelivery: 'outbox', mailLogged: true } });
    } finally {
      await logged.close();
    }
  });

  it('a code mailed on instance A reaches staff watching on instance B at once, and is listed there; it signs the member in', async () => {
    const support = await seed(b).staff('support');
    const client = cookieClient(b, support);
    type View = { delivery: string; logged: boolean; mails: OutboxMail[] };
    const views: View[] = [];
    const unsubscribe = client.subscribe<{ devOutboxChanged: View }>(
      { query: 'subscription { devOutboxChanged { delivery logged mails { id to subject text sentAt } } }' },
      { next: (result) => void (result.data && views.push(result.data.devOutboxChanged)), error: () => undefined, complete: () => undefined },
    );
    try {
      // The outbox as it is, at once: the subscription is open.
      await expect.poll(() => views.length).toBe(1);
      expect(views[0]).toMatchObject({ delivery: 'outbox', logged: false });

      const email = uniqueEmail('newcomer');
      const member = new Browser(a.url);
      const started = await member.fetch('/api/membership/auth/signup', { body: { email, password: 'a long enough password' } });
      expect(started.status).toBe(202);
      await expect.poll(() => views.at(-1)?.mails[0]?.to).toBe(email);
      const pushed = views.at(-1)!.mails[0]!;
      const code = /\b(\d{6})\b/.exec(pushed.text)?.[1];
      expect(code).toMatch(/^\d{6}$/);

      const listed = await support.web.graphql<{ devOutbox: View }>(OUTBOX);
      expect(listed.errors).toBeUndefined();
      expect(listed.data?.devOutbox).toEqual(views.at(-1));

      const verified = await member.fetch('/api/membership/auth/email-code/verify', { body: { email, code } });
      expect(verified.status).toBe(200);
    } finally {
      unsubscribe();
      await client.dispose();
    }
  });

  it('members cannot read the outbox', async () => {
    const member = await seed(a).member();
    const refused = await member.web.graphql(OUTBOX);
    expect(refused.errors?.[0]?.extensions?.code).toBe('forbidden');
  });
});

describe('production without SMTP', () => {
  let app: TestApp;

  beforeAll(async () => {
    // A key prefix of its own: the development outbox above wrote under the shared one.
    const keyPrefix = `${(mode.config.redis as { keyPrefix: string }).keyPrefix}production:`;
    app = await startApp(mode.config, { config: { server: { production: true }, redis: { keyPrefix } } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('refuses sign-up and email codes with 503 mail_not_configured, says so, and keeps nothing', async () => {
    const browser = new Browser(app.url);
    const email = uniqueEmail('nomail');
    for (const [path, body] of [
      ['/api/membership/auth/signup', { email, password: 'a long enough password' }],
      ['/api/membership/auth/email-code/start', { email }],
    ] as const) {
      const response = await browser.fetch(path, { body });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBeNull();
      expect(response.headers.get('x-should-retry')).toBe('false');
      const envelope = (await response.json()) as { code: string; message: string; messageZh: string };
      expect(envelope.code).toBe('mail_not_configured');
      expect(envelope.message).toContain('mail.smtp');
      expect(envelope.messageZh).toContain('mail.smtp');
    }
    const viaGraphQL = await browser.graphql('mutation($e: String!) { signUp(email: $e, password: "a long enough password") { email } }', { e: email });
    expect(viaGraphQL.errors?.[0]?.extensions?.code).toBe('mail_not_configured');
    expect((await browser.graphql(PROVIDERS)).data).toEqual({ authProviders: { emailCode: false, mailDelivery: 'unavailable', mailLogged: false } });
    expect(app.app.services.mailer.lastTo(email)).toBeUndefined();

    const support = await seed(app).staff('support');
    const outbox = await support.web.graphql<{ devOutbox: { delivery: string; mails: unknown[] } }>(OUTBOX);
    expect(outbox.data?.devOutbox).toMatchObject({ delivery: 'unavailable', mails: [] });
    const redis = new Redis(testRedisUrl);
    try {
      expect(await redis.exists(`${app.config.redis.keyPrefix}mail:dev-outbox`)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it('with mail.logOutbox the codes go to the server log, and sign-up works', async () => {
    const logged = await startApp(mode.config, { config: { server: { production: true } }, env: { SVC_MAIL_LOG_OUTBOX: '1' } });
    try {
      const browser = new Browser(logged.url);
      expect((await browser.graphql(PROVIDERS)).data).toEqual({ authProviders: { emailCode: true, mailDelivery: 'log', mailLogged: true } });
      const started = await browser.fetch('/api/membership/auth/signup', { body: { email: uniqueEmail('logged'), password: 'a long enough password' } });
      expect(started.status).toBe(202);
    } finally {
      await logged.close();
    }
  });
});

describe('with SMTP', () => {
  it('says mail is emailed, and staff have no outbox to read', async () => {
    const app = await startApp(mode.config, { config: { mail: { smtp: { host: '127.0.0.1', port: 2525 } } } });
    try {
      expect((await new Browser(app.url).graphql(PROVIDERS)).data).toEqual({ authProviders: { emailCode: true, mailDelivery: 'smtp', mailLogged: false } });
      const support = await seed(app).staff('support');
      expect((await support.web.graphql<{ devOutbox: unknown }>(OUTBOX)).data?.devOutbox).toEqual({ delivery: 'smtp', logged: false, mails: [] });
    } finally {
      await app.close();
    }
  });
});

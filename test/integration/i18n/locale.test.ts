/**
 * The server side of Chinese as a first-class language, on real PostgreSQL and Redis: the account's
 * language (`me.locale`, `setLocale`, the REST `me`), the sign-in code mail in the account's language (or
 * the page's, for an address with no account), and error envelopes whose `messageZh` carries the same
 * amounts, limits and seconds as the English `message` — the 402 quota refusal and the 429 rate limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { Browser, uniqueEmail } from '../../helpers/browser.ts';
import { seed } from '../../helpers/seed.ts';

const plans = {
  ...defaultPlans,
  // Free: a fast day pool too small for any request, so the first call is refused with 402.
  free: { ...defaultPlans.free, pools: { ...defaultPlans.free.pools, fast: { day: 0.000001, week: 1, month: 4 } } },
  // Pro: one request a minute, so the second call is refused with 429.
  pro: { ...defaultPlans.pro, requestsPerMinute: 1 },
};

let setup: Awaited<ReturnType<typeof realMode>>;
let upstream: ScriptedUpstream;
let server: TestApp;

beforeAll(async () => {
  setup = await realMode();
  upstream = await startScriptedUpstream();
  server = await startApp(setup.config, { config: { plans }, env: { SVC_UPSTREAM_URL: upstream.url } });
});

afterAll(async () => {
  await server?.close();
  await upstream?.close();
  await setup?.cleanup();
});

interface Envelope {
  code: string;
  message: string;
  messageZh: string;
  quota?: { used: { amount: string }; limit: { amount: string }; requestMaxCost: { amount: string }; resetsAt: string };
  retryAfterSeconds?: number;
}

async function chat(key: string): Promise<{ status: number; body: Envelope }> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: '你好' }], max_tokens: 16 }),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

describe('account language', () => {
  it('is null until the member picks one, then stored and returned by GraphQL and REST', async () => {
    const member = await seed(server).member();
    const browser = member.web;
    const me = await browser.graphql<{ me: { locale: string | null } }>('{ me { locale } }');
    expect(me.data?.me.locale).toBeNull();

    const set = await browser.graphql<{ setLocale: { locale: string } }>('mutation($l: String!) { setLocale(locale: $l) { locale } }', { l: 'zh-CN' });
    expect(set.data?.setLocale.locale).toBe('zh-CN');
    const rest = await browser.fetch('/api/membership/me');
    expect(((await rest.json()) as { account: { locale: string } }).account.locale).toBe('zh-CN');

    // A language svc does not speak: a precise error, in both languages, naming the valid ones.
    const bad = await browser.graphql('mutation { setLocale(locale: "fr") { locale } }');
    expect(bad.errors?.[0]).toMatchObject({
      message: 'locale must be one of en, zh-CN.',
      extensions: { code: 'invalid_request', messageZh: 'locale 必须是 en, zh-CN 之一。' },
    });
  });

  it('needs a signed-in caller', async () => {
    const anonymous = new Browser(server.url);
    const result = await anonymous.graphql('mutation { setLocale(locale: "en") { locale } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('sign_in_required');
  });
});

describe('sign-in code mail', () => {
  it("is in the account's language", async () => {
    const member = await seed(server).member();
    const browser = member.web;
    await browser.graphql('mutation { setLocale(locale: "zh-CN") { locale } }');
    // The page asking is English; the account's own choice wins.
    const response = await browser.fetch('/api/membership/auth/email-code/start', { body: { email: member.email }, headers: { 'accept-language': 'en-US' } });
    expect(response.status).toBe(200);
    const mail = server.app.services.mailer.lastTo(member.email)!;
    expect(mail.subject).toMatch(/^svc 登录验证码：\d{6}$/);
    expect(mail.text).toMatch(/^您的 svc 登录验证码是 \d{6}，10 分钟内有效。/);
  });

  it('follows the page (cookie, then Accept-Language) for an address with no account yet', async () => {
    const browser = new Browser(server.url);
    const chinese = uniqueEmail('zh-new');
    await browser.fetch('/api/membership/auth/email-code/start', { body: { email: chinese }, headers: { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' } });
    expect(server.app.services.mailer.lastTo(chinese)!.subject).toMatch(/^svc 登录验证码/);

    const english = uniqueEmail('en-new');
    await browser.fetch('/api/membership/auth/email-code/start', { body: { email: english }, headers: { 'accept-language': 'zh-CN', cookie: 'svc_locale=en' } });
    expect(server.app.services.mailer.lastTo(english)!.subject).toMatch(/^Your svc sign-in code: \d{6}$/);

    // Over GraphQL too (the web app's path).
    const viaGraphql = uniqueEmail('zh-gql');
    const zhBrowser = new Browser(server.url);
    const started = await zhBrowser.fetch('/graphql', {
      body: { query: 'mutation($e: String!) { startEmailCode(email: $e) { email } }', variables: { e: viaGraphql } },
      headers: { 'accept-language': 'zh' },
    });
    expect(started.status).toBe(200);
    expect(server.app.services.mailer.lastTo(viaGraphql)!.text).toMatch(/^您的 svc 登录验证码是/);
  });
});

describe('error envelopes carry the same values in Chinese', () => {
  it('402 quota_exceeded: used, limit, currency, the request cost and the reset time in both languages', async () => {
    const { key } = await seed(server).member().then((member) => member.withKey());
    const { status, body } = await chat(key);
    expect(status).toBe(402);
    expect(body.code).toBe('quota_exceeded');
    const quota = body.quota!;
    for (const value of [quota.used.amount, quota.limit.amount, 'USD', quota.requestMaxCost.amount, quota.resetsAt]) {
      expect(body.message).toContain(value);
      expect(body.messageZh).toContain(value);
    }
    expect(body.message).toContain('fast daily pool');
    expect(body.messageZh).toMatch(/^您的快速档每日额度还剩 /);
  });

  it('429 rate_limited: the seconds to wait in both languages, equal to Retry-After', async () => {
    const { key } = await seed(server).member({ planPackage: 'pro' }).then((member) => member.withKey());
    await chat(key);
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'again' }] }),
    });
    expect(response.status).toBe(429);
    const body = (await response.json()) as Envelope;
    const seconds = Number(response.headers.get('retry-after'));
    expect(seconds).toBeGreaterThan(0);
    expect(body.retryAfterSeconds).toBe(seconds);
    expect(body.message).toBe(`Too many requests; retry in ${seconds} s.`);
    expect(body.messageZh).toBe(`请求过于频繁，请在 ${seconds} 秒后重试。`);
  });

  it('a 404 route names method and path in both languages', async () => {
    const response = await fetch(`${server.url}/api/membership/nothing-here`);
    const body = (await response.json()) as Envelope;
    expect(body.message).toBe('No route for GET /api/membership/nothing-here.');
    expect(body.messageZh).toBe('没有 GET /api/membership/nothing-here 这个路由。');
  });
});

/**
 * Sign-up is throttled per email domain as well as per IP (config `auth.throttle.signUpPerHourPerDomain`):
 * scripted sign-ups spread over many addresses still meet a limit, with 429 and Retry-After, over REST and
 * GraphQL alike; other domains are not affected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { Browser, uniqueEmail } from '../../helpers/browser.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;

beforeAll(async () => {
  setup = await realMode();
  // 127.0.0.1 is a trusted proxy here, so each sign-up can come from its own X-Forwarded-For address.
  app = await startApp(setup.config, { config: { server: { trustedProxies: ['127.0.0.1'] }, auth: { throttle: { signUpPerHourPerDomain: 3, signUpPerHourPerIp: 1000 } } } });
});

afterAll(async () => {
  await app?.close();
  await setup?.cleanup();
});

let address = 0;
function signUp(email: string): Promise<Response> {
  address += 1;
  return new Browser(app.url).fetch('/api/membership/auth/signup', {
    body: { email, password: 'correct horse battery staple' },
    headers: { 'x-forwarded-for': `198.18.7.${address}` },
  });
}

describe('sign-up throttle per email domain', () => {
  it('the fourth sign-up of a domain within the hour is a 429 with Retry-After, from any address; other domains go on', async () => {
    for (let i = 0; i < 3; i += 1) expect((await signUp(uniqueEmail('crowd', 'crowd.example'))).status).toBe(202);
    const limited = await signUp(uniqueEmail('crowd', 'CROWD.example'));
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await limited.json()).toMatchObject({ code: 'rate_limited', stage: 'rate_limit', message: expect.stringContaining('@crowd.example'), retryAfterSeconds: retryAfter });

    const graphql = await new Browser(app.url).graphql('mutation($email: String!) { signUp(email: $email, password: "correct horse battery staple") { email } }', {
      email: uniqueEmail('crowd', 'crowd.example'),
    });
    expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'rate_limited', retryAfter: expect.any(Number) });

    expect((await signUp(uniqueEmail('calm', 'calm.example'))).status).toBe(202);
  });
});

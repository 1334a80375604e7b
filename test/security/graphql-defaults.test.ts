/**
 * Issue 46 item 10: `/graphql` as it runs by default. Its errors suggested names ("Did you mean …?") unless
 * the instance ran in production, and even then enum values slipped through; it answered any Origin with
 * credentialed CORS. Now suggestions are off unless `graphql.suggestions: true`, and only the web app's own
 * origins (base URL, web URL, `server.corsOrigins`) get CORS, with credentials. Real PostgreSQL and Redis.
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
const webOrigin = 'https://app.example.test';
const consoleOrigin = 'https://console.example.test';

beforeAll(async () => {
  mode = await realMode();
  // Neither production nor any graphql setting: the defaults an operator gets.
  app = await startApp(mode.config, { config: { server: { webUrl: webOrigin, corsOrigins: [consoleOrigin] } } });
});
afterAll(async () => {
  await app?.close();
  await mode?.cleanup();
});

/** Typos an attacker would try to map the schema with: a field, an argument, a type, an enum value (literal and variable). */
const typos: [query: string, variables: Record<string, unknown>, what: RegExp][] = [
  ['{ plan { id } }', {}, /Cannot query field "plan" on type "Query"/],
  ['{ enterpriseApplications(stat: pending_review) { __typename } }', {}, /Unknown argument "stat"/],
  ['query($s: EnterpriseApplicationStat) { enterpriseApplications(state: $s) { __typename } }', {}, /Unknown type "EnterpriseApplicationStat"/],
  ['{ enterpriseApplications(state: pending_reviw) { __typename } }', {}, /Value "pending_reviw" does not exist in "EnterpriseApplicationState" enum/],
  ['query($s: EnterpriseApplicationState) { enterpriseApplications(state: $s) { __typename } }', { s: 'pending_reviw' }, /Variable "\$s" got invalid value "pending_reviw"/],
];

async function errorMessages(target: TestApp, query: string, variables: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${target.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { errors?: { message: string }[] };
  return (body.errors ?? []).map((error) => error.message).join('\n');
}

describe('GraphQL field suggestions', () => {
  it('are off by default: errors say what is wrong and name nothing the caller did not write', async () => {
    for (const [query, variables, what] of typos) {
      const message = await errorMessages(app, query, variables);
      expect(message, query).toMatch(what);
      expect(message, query).not.toMatch(/Did you mean|Suggestion/);
      expect(message, query).not.toMatch(/"plans"|"state"|"EnterpriseApplicationState",|"pending_review"/);
    }
  });

  it('are off over graphql-ws too', async () => {
    const client = createClient({ url: `${app.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const errors = await new Promise<readonly { message: string }[]>((resolve, reject) => {
        client.subscribe({ query: 'subscription { enterpriseApplicationChange { id } }' }, { next: () => reject(new Error('answered')), error: (error) => resolve(error as { message: string }[]), complete: () => reject(new Error('completed')) });
      });
      expect(errors[0]!.message).toMatch(/Cannot query field "enterpriseApplicationChange"/);
      expect(errors[0]!.message).not.toMatch(/Did you mean/);
    } finally {
      await client.dispose();
    }
  });

  it('are on with graphql.suggestions: true', async () => {
    const helpful = await startApp(mode.config, { config: { graphql: { suggestions: true } } });
    try {
      expect(await errorMessages(helpful, typos[0]![0], {})).toMatch(/Did you mean "plans"\?/);
      expect(await errorMessages(helpful, typos[3]![0], {})).toMatch(/Did you mean the enum value "pending_review"\?/);
      expect(await errorMessages(helpful, typos[4]![0], typos[4]![1])).toMatch(/Did you mean the enum value "pending_review"\?/);
    } finally {
      await helpful.close();
    }
  });
});

const preflight = (origin: string) =>
  fetch(`${app.url}/graphql`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
const corsOf = (response: Response) => ({ origin: response.headers.get('access-control-allow-origin'), credentials: response.headers.get('access-control-allow-credentials') });
const none = { origin: null, credentials: null };

describe('CORS on /graphql', () => {
  it('another origin gets no CORS headers: not on the preflight, a GET query or a POST', async () => {
    for (const origin of ['https://evil.example', 'null', 'http://127.0.0.1:1']) {
      expect(corsOf(await preflight(origin)), origin).toEqual(none);
      const get = await fetch(`${app.url}/graphql?query=${encodeURIComponent('{ plans { id } }')}`, { headers: { origin } });
      expect(get.status).toBe(200);
      expect(corsOf(get), origin).toEqual(none);
      expect(get.headers.get('vary')).toMatch(/origin/i);
      const post = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ plans { id } }' }) });
      expect(corsOf(post), origin).toEqual(none);
    }
  });

  it('the web app (base URL, web URL) and server.corsOrigins get credentialed CORS', async () => {
    for (const origin of [app.url, webOrigin, consoleOrigin]) {
      const answer = await preflight(origin);
      expect(answer.status).toBe(204);
      expect(corsOf(answer), origin).toEqual({ origin, credentials: 'true' });
      expect(answer.headers.get('access-control-allow-methods')).toBe('GET, POST');
      const get = await fetch(`${app.url}/graphql?query=${encodeURIComponent('{ plans { id } }')}`, { headers: { origin } });
      expect(corsOf(get), origin).toEqual({ origin, credentials: 'true' });
      expect(get.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
    }
  });

  it('a page on a server.corsOrigins origin may use the member\'s cookie; another origin may not', async () => {
    const member = await seed(app).member();
    const fromConsole = new Browser(app.url, consoleOrigin, member.web.cookie);
    const allowed = await fromConsole.fetch('/graphql', { body: { query: '{ me { id } }' } });
    expect(corsOf(allowed)).toEqual({ origin: consoleOrigin, credentials: 'true' });
    expect(((await allowed.json()) as { data: { me: { id: string } } }).data.me.id).toBe(member.id);
    const refused = await new Browser(app.url, 'https://evil.example', member.web.cookie).fetch('/graphql', { body: { query: '{ me { id } }' } });
    expect(refused.status).toBe(403);
    expect(corsOf(refused)).toEqual(none);
  });
});

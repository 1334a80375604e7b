/**
 * GraphQL errors say as much as REST errors (issue 9 item 6): `extensions.code`, `stage`, `status`, the
 * request id of the `x-svc-request-id` header (over graphql-ws, the operation's own), and `retryAfter` where
 * REST sends Retry-After. Variables of the wrong type are the client's fault (`invalid_request`), never an
 * internal error.
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { Browser, uniqueEmail, type GraphQLError } from '../../helpers/browser.ts';
import { seed } from '../../helpers/seed.ts';

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

async function post(body: unknown, headers: Record<string, string> = {}): Promise<{ response: Response; errors: GraphQLError[] }> {
  const response = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const { errors } = (await response.clone().json()) as { errors: GraphQLError[] };
  return { response, errors };
}

describe('GraphQL error extensions', () => {
  it('every error carries code, stage, status and the request id of the response header', async () => {
    const cases: [string, unknown, string, string][] = [
      ['signed out', { query: '{ apiKeys { id } }' }, 'sign_in_required', 'auth'],
      ['syntax', { query: '{ apiKeys { id ' }, 'invalid_request', 'validation'],
      ['unknown field', { query: '{ nothingHere }' }, 'invalid_request', 'validation'],
      ['bad input', { query: 'mutation { startEmailCode(email: "not-an-email") { email } }' }, 'invalid_request', 'validation'],
    ];
    for (const [name, body, code, stage] of cases) {
      const { response, errors } = await post(body);
      const requestId = response.headers.get('x-svc-request-id');
      expect(requestId, name).toMatch(/^mbr_/);
      expect(errors.length, name).toBeGreaterThan(0);
      for (const error of errors) {
        expect(error.extensions, name).toMatchObject({ code, stage, requestId, messageZh: expect.any(String), actions: expect.any(Array) });
      }
    }
    // A client's own well-formed request id is the one in the errors too.
    const { errors } = await post({ query: '{ apiKeys { id } }' }, { 'x-svc-request-id': 'mbr_client-trace-0001' });
    expect(errors[0]!.extensions).toMatchObject({ requestId: 'mbr_client-trace-0001', status: 401 });
  });

  it('variables of the wrong type are invalid_request (400-class), not internal_error', async () => {
    const member = await seed(app).member();
    const cases: [string, string, Record<string, unknown>][] = [
      ['Int given a string', 'query($first: Int) { usageHistory(first: $first) { nodes { requestId } } }', { first: 'ten' }],
      ['ID given an object', 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: { nested: true } }],
      ['required variable missing', 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', {}],
      ['DateTime given garbage', 'mutation($id: ID!, $until: DateTime) { setAccountPackage(accountId: $id, packageId: "pro", reason: "x", until: $until) { id } }', { id: member.id, until: 'soon' }],
      ['enum given an unknown value', 'mutation($id: ID!, $role: AccountRole!) { setAccountRole(accountId: $id, role: $role) { id } }', { id: member.id, role: 'root' }],
    ];
    for (const [name, query, variables] of cases) {
      const response = await member.web.fetch('/graphql', { body: { query, variables } });
      const { errors } = (await response.json()) as { errors: GraphQLError[] };
      expect(response.status, name).toBeLessThan(500);
      expect(errors[0]!.extensions, name).toMatchObject({ code: 'invalid_request', stage: 'validation', status: 400, requestId: response.headers.get('x-svc-request-id') });
    }
  });

  it('a rate-limited mutation carries retryAfter (seconds) and the limit, as REST sends them in headers', async () => {
    const email = uniqueEmail('throttled');
    const web = new Browser(app.url);
    const start = 'mutation($email: String!) { startEmailCode(email: $email) { email } }';
    for (let i = 0; i < app.config.auth.throttle.emailCodePerHourPerEmail; i += 1) {
      expect((await web.graphql(start, { email })).errors, `code ${i + 1}`).toBeUndefined();
    }
    const limited = await web.graphql(start, { email });
    const extensions = limited.errors![0]!.extensions!;
    expect(extensions).toMatchObject({ code: 'rate_limited', stage: 'rate_limit', status: 429, requestId: limited.requestId, actions: ['wait'] });
    expect(extensions.retryAfter).toEqual(expect.any(Number));
    expect(extensions.retryAfter).toBeGreaterThan(0);
    expect(extensions.retryAfterSeconds).toBe(extensions.retryAfter);
    expect(extensions.rateLimit).toMatchObject({ limit: app.config.auth.throttle.emailCodePerHourPerEmail, remaining: 0 });

    // REST says the same in its headers.
    const rest = await web.fetch('/api/membership/auth/email-code/start', { body: { email } });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get('retry-after'))).toBeCloseTo(Number(extensions.retryAfter), -1);
  });

  it('over graphql-ws each operation has its own request id, on execution and validation errors alike', async () => {
    const client = createClient({ url: `${app.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    const run = (query: string) =>
      new Promise<GraphQLError[]>((resolve, reject) => {
        let errors: GraphQLError[] = [];
        client.subscribe(
          { query },
          {
            next: (result) => (errors = (result.errors ?? []) as GraphQLError[]),
            error: (error) => (Array.isArray(error) ? resolve(error as GraphQLError[]) : reject(error)),
            complete: () => resolve(errors),
          },
        );
      });
    try {
      const first = await run('{ apiKeys { id } }');
      const second = await run('{ apiKeys { id } }');
      expect(first[0]!.extensions).toMatchObject({ code: 'sign_in_required', requestId: expect.stringMatching(/^mbr_/) });
      expect(second[0]!.extensions!.requestId).not.toBe(first[0]!.extensions!.requestId);
      const invalid = await run('{ nothingHere }');
      expect(invalid[0]!.extensions).toMatchObject({ code: 'invalid_request', requestId: expect.stringMatching(/^mbr_/) });
      const syntax = await run('{ apiKeys { id ');
      expect(syntax[0]!.extensions).toMatchObject({ code: 'invalid_request', requestId: expect.stringMatching(/^mbr_/) });
      // The socket survived the syntax error: it still answers.
      expect((await run('{ plans { id } }')).length).toBe(0);
    } finally {
      await client.dispose();
    }
  });
});

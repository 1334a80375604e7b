/**
 * svc's OAuth endpoints for MCP clients, request by request: RFC 8414 and RFC 9728 metadata, dynamic
 * registration (RFC 7591) and what it refuses, the authorize endpoint's errors (shown on the consent page
 * until the client and redirect URI are known good, sent back to the client after), the token endpoint's
 * checks on the one-time code (PKCE S256, redirect URI, client, resource, expiry, single use — a replay
 * revokes what the code gave), the consent page's rules, and tokens stored as SHA-256 only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed, type Person } from '../../helpers/seed.ts';
import { relaxedLimits } from '../gateway/harness.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
const redirectUri = 'http://127.0.0.1:33418/callback';

beforeAll(async () => {
  mode = await realMode();
  // Every test registers clients from 127.0.0.1; the per-address limit has its own test below.
  app = await startApp(mode.config, { config: { ...relaxedLimits, auth: { oauth: { registrationsPerHourPerIp: 1000 } } } });
});

afterAll(async () => {
  await app?.close();
  await mode?.cleanup();
});

const json = (path: string, body: unknown) => fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const form = (path: string, body: Record<string, string>) =>
  fetch(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });

async function register(uris: string[] = [redirectUri], name = 'endpoint test client'): Promise<string> {
  const response = await json('/oauth/register', { client_name: name, redirect_uris: uris, token_endpoint_auth_method: 'none' });
  expect(response.status).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizeUrl(params: Record<string, string>): string {
  return `${app.url}/oauth/authorize?${new URLSearchParams(params)}`;
}

async function location(url: string): Promise<URL> {
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location')!);
}

const APPROVE = 'mutation($id: ID!) { approveOAuthAuthorization(id: $id) { redirectTo request { state clientName redirectHost scope } } }';

/** A fresh code for `clientId`, approved by `member`: what the client receives on its redirect URI. */
async function approvedCode(member: Person, clientId: string, challenge: string, extra: Record<string, string> = {}): Promise<string> {
  const consent = await location(authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', ...extra }));
  const decided = await member.web.graphql<{ approveOAuthAuthorization: { redirectTo: string } }>(APPROVE, { id: consent.searchParams.get('request') });
  return new URL(decided.data!.approveOAuthAuthorization.redirectTo).searchParams.get('code')!;
}

describe('metadata', () => {
  it('RFC 8414: authorization code with PKCE S256, registration, refresh and the device grant, public clients', async () => {
    const metadata = await (await fetch(`${app.url}/.well-known/oauth-authorization-server`)).json();
    expect(metadata).toMatchObject({
      issuer: app.url,
      authorization_endpoint: `${app.url}/oauth/authorize`,
      token_endpoint: `${app.url}/oauth/token`,
      registration_endpoint: `${app.url}/oauth/register`,
      revocation_endpoint: `${app.url}/oauth/revoke`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['mcp'],
    });
  });

  it('RFC 9728: the MCP endpoint names svc as its authorization server and mcp as its scope', async () => {
    expect(await (await fetch(`${app.url}/.well-known/oauth-protected-resource/v1/mcp`)).json()).toMatchObject({
      resource: `${app.url}/v1/mcp`,
      authorization_servers: [app.url],
      scopes_supported: ['mcp'],
    });
    const refused = await fetch(`${app.url}/v1/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/v1/mcp", scope="mcp"`);
  });
});

describe('POST /oauth/register (RFC 7591)', () => {
  it('registers a public client and answers its metadata (201)', async () => {
    const uris = ['http://127.0.0.1:5000/cb', 'http://localhost/callback', 'http://[::1]:8080/cb', 'https://app.example.com/oauth/callback', 'cursor://anysphere.cursor-mcp/oauth/callback'];
    const response = await json('/oauth/register', { client_name: 'Cursor', redirect_uris: uris, grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], scope: 'mcp', software_id: 'cursor' });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ client_name: 'Cursor', redirect_uris: uris, token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], software_id: 'cursor' });
    expect(body.client_secret).toBeUndefined();
    const stored = await mode.database.query(`select client_name, redirect_uris from oauth_client where id = $1`, [body.client_id]);
    expect(stored.rows[0]).toEqual({ client_name: 'Cursor', redirect_uris: uris });
  });

  it.each([
    [{ redirect_uris: ['http://example.com/callback'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['data:text/html,hi'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example.com/cb#fragment'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://user:pass@app.example.com/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['/relative/callback'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example.com/cb\u0000'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example.com/c b'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: [] }, 'invalid_redirect_uri'],
    [{ redirect_uris: 'https://app.example.com/cb' }, 'invalid_redirect_uri'],
    [{}, 'invalid_redirect_uri'],
    [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/${i}`) }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example.com/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://app.example.com/cb'], response_types: ['token'] }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://app.example.com/cb'], client_name: 'x'.repeat(201) }, 'invalid_client_metadata'],
    [{ redirect_uris: ['https://app.example.com/cb'], client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata'],
  ])('refuses %j with 400 %s', async (body, error) => {
    const response = await json('/oauth/register', body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error, error_description: expect.any(String) });
  });

  it('is limited per address: 429 with Retry-After', async () => {
    // Its own Redis prefix: the other tests' registrations from 127.0.0.1 count in the shared one.
    const limited = await startApp(
      { ...mode.config, redis: { ...(mode.config.redis as object), keyPrefix: `svc-test:oauth-limit-${Date.now()}:` } },
      { config: { ...relaxedLimits, auth: { oauth: { registrationsPerHourPerIp: 2 } } } },
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${limited.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [redirectUri] }) });
        statuses.push(response.status);
        if (response.status === 429) {
          expect(response.headers.get('retry-after')).not.toBeNull();
          expect(await response.json()).toMatchObject({ error: 'temporarily_unavailable' });
        }
      }
      expect(statuses).toEqual([201, 201, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('GET /oauth/authorize', () => {
  it('sends the browser to the consent page; a loopback redirect URI may name another port', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const consent = await location(authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1:45678/callback', code_challenge: challenge, code_challenge_method: 'S256', state: 'xyz', resource: `${app.url}/v1/mcp`, scope: 'mcp' }));
    expect(consent.origin + consent.pathname).toBe(`${app.url}/oauth/consent`);
    expect(consent.searchParams.get('request')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('never redirects to an unknown client or an unregistered redirect URI: the consent page explains', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const base = { response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' };
    const unknown = await location(authorizeUrl({ ...base, client_id: '00000000-0000-4000-8000-000000000000', redirect_uri: redirectUri }));
    expect(unknown.origin + unknown.pathname).toBe(`${app.url}/oauth/consent`);
    expect(unknown.searchParams.get('error')).toBe('unknown_client');
    for (const uri of ['https://evil.example/callback', 'http://127.0.0.1:33418/other']) {
      const wrong = await location(authorizeUrl({ ...base, client_id: clientId, redirect_uri: uri }));
      expect(wrong.origin + wrong.pathname).toBe(`${app.url}/oauth/consent`);
      expect(wrong.searchParams.get('error')).toBe('invalid_redirect_uri');
    }
  });

  it.each([
    [{ code_challenge: undefined }, 'invalid_request'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge: 'short' }, 'invalid_request'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
    [{ state: 's-1\u0000' }, 'invalid_request'],
  ])('sends %j back to the client as error=%s, with its state', async (change, error) => {
    const clientId = await register();
    const params: Record<string, string | undefined> = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 's-1', ...change };
    const back = await location(authorizeUrl(Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined)) as Record<string, string>));
    expect(back.origin + back.pathname).toBe('http://127.0.0.1:33418/callback');
    expect(back.searchParams.get('error')).toBe(error);
    expect(back.searchParams.get('state')).toBe(params.state);
    expect(back.searchParams.get('error_description')).toBeTruthy();
  });
});

describe('POST /oauth/token, grant_type=authorization_code', () => {
  const exchange = (clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) =>
    form('/oauth/token', { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier, ...extra });

  it('refuses a wrong PKCE verifier, redirect URI, client or resource, then exchanges once; a replayed code revokes its tokens', async () => {
    const member = await seed(app).member();
    const clientId = await register();
    const otherClient = await register();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(member, clientId, challenge, { resource: `${app.url}/v1/mcp` });

    const refusals: [Record<string, string>, string, string][] = [
      [{ code_verifier: pkce().verifier }, 'invalid_grant', 'code_verifier does not match'],
      [{ redirect_uri: 'http://127.0.0.1:33418/elsewhere' }, 'invalid_grant', 'redirect_uri'],
      [{ client_id: otherClient }, 'invalid_grant', 'another client'],
      [{ resource: app.url }, 'invalid_target', 'resource must be'],
      [{ resource: 'https://other.example/mcp' }, 'invalid_target', 'resource must be'],
    ];
    for (const [change, error, says] of refusals) {
      const response = await exchange(clientId, code, verifier, change);
      expect(response.status, JSON.stringify(change)).toBe(400);
      const body = (await response.json()) as { error: string; error_description: string };
      expect(body.error, JSON.stringify(change)).toBe(error);
      expect(body.error_description).toContain(says);
    }
    const missing = await form('/oauth/token', { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri });
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });

    const granted = await exchange(clientId, code, verifier);
    expect(granted.status).toBe(200);
    expect(granted.headers.get('cache-control')).toBe('no-store');
    const tokens = (await granted.json()) as { access_token: string; refresh_token: string };
    const tools = () => fetch(`${app.url}/v1/mcp`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await tools()).status).toBe(200);

    // Stored as SHA-256 only.
    const stored = await mode.database.query(`select token_hash from oauth_token where token_hash in ($1, $2, $3, $4)`, [
      tokens.access_token,
      tokens.refresh_token,
      createHash('sha256').update(tokens.access_token).digest('hex'),
      createHash('sha256').update(tokens.refresh_token).digest('hex'),
    ]);
    expect(stored.rows).toHaveLength(2);

    const replay = await exchange(clientId, code, verifier);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
    expect((await tools()).status).toBe(401);
    expect(await (await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId })).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('exchanges a code exactly once when many try at the same moment', async () => {
    const member = await seed(app).member();
    const clientId = await register();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(member, clientId, challenge);
    const statuses = await Promise.all(Array.from({ length: 8 }, () => exchange(clientId, code, verifier).then((response) => response.status)));
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 400)).toHaveLength(7);
  });

  it('refuses an expired code, an unknown one and an unknown grant type', async () => {
    const member = await seed(app).member();
    const clientId = await register();
    const { verifier, challenge } = pkce();
    const code = await approvedCode(member, clientId, challenge);
    await mode.database.query(`update oauth_authorization set code_expires_at = now() - interval '1 second' where code_hash = $1`, [createHash('sha256').update(code).digest('hex')]);
    expect(await (await exchange(clientId, code, verifier)).json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('expired') });
    expect(await (await exchange(clientId, 'no-such-code', verifier)).json()).toMatchObject({ error: 'invalid_grant' });
    expect(await (await form('/oauth/token', { grant_type: 'password', username: 'a', password: 'b' })).json()).toMatchObject({ error: 'unsupported_grant_type' });
  });
});

describe('the consent page', () => {
  const OPEN = 'query($id: ID!) { oauthAuthorizationRequest(id: $id) { clientName redirectHost scope state resource } }';

  it('needs a web session; shows the client, host and scope; decides once; is not another member’s to see', async () => {
    const member = await seed(app).member();
    const clientId = await register(['http://localhost:7777/callback'], 'Codex (test)');
    const consent = await location(
      authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: 'http://localhost:7777/callback', code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: `${app.url}/v1/mcp` }),
    );
    const id = consent.searchParams.get('request')!;

    const key = await member.key();
    const byKey = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: APPROVE, variables: { id } }) });
    expect(((await byKey.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('sign_in_required');

    const opened = await member.web.graphql<{ oauthAuthorizationRequest: Record<string, unknown> }>(OPEN, { id });
    expect(opened.data?.oauthAuthorizationRequest).toEqual({ clientName: 'Codex (test)', redirectHost: 'localhost:7777', scope: 'mcp', state: 'pending', resource: `${app.url}/v1/mcp` });
    expect((await member.web.graphql(APPROVE, { id })).errors).toBeUndefined();
    const again = await member.web.graphql(APPROVE, { id });
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request' });
    expect(again.errors?.[0]?.message).toContain('already approved');

    const stranger = await seed(app).member();
    expect((await stranger.web.graphql(OPEN, { id })).errors?.[0]?.extensions).toMatchObject({ code: 'not_found' });
  });

  it('an expired request cannot be approved', async () => {
    const member = await seed(app).member();
    const clientId = await register();
    const consent = await location(authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: pkce().challenge, code_challenge_method: 'S256' }));
    const id = consent.searchParams.get('request')!;
    await mode.database.query(`update oauth_authorization set expires_at = now() - interval '1 second' where id = $1`, [id]);
    const expired = await member.web.graphql(APPROVE, { id });
    expect(expired.errors?.[0]?.extensions).toMatchObject({ code: 'expired_token' });
  });
});

/**
 * An MCP client signs in by OAuth the way MCP clients do, with the official SDK's client and its OAuth
 * provider: the 401's `WWW-Authenticate` names the protected resource metadata, which names svc as the
 * authorization server; the client registers itself (RFC 7591), is sent to the authorize URL, the member
 * approves on the consent page (here: the page's own GraphQL mutation from the member's signed-in browser
 * session; test/e2e/mcp-oauth.test.ts clicks the real page in Chromium), the code comes back to the
 * client's loopback redirect URI, is exchanged with the PKCE verifier, and `tools/list` and `tools/call`
 * work — metered to the member. The token is good only on the MCP endpoints; the member sees the client
 * among their sessions and revokes it, on every instance; refresh tokens rotate and a replayed one ends the
 * grant. Real PostgreSQL and Redis, two instances.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedSearxng, type ScriptedSearxng } from '../../fixtures/scripted-searxng.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { sleep } from '../../helpers/browser.ts';
import { decideAs, mcpTransport, MemoryOAuthProvider, signInAndConnect, startCallbackServer, type CallbackServer } from '../../helpers/mcp-oauth.ts';
import { assertSvcSearchV1 } from '../../helpers/search-schema.ts';
import { seed, type Person } from '../../helpers/seed.ts';
import { ledgerRows, relaxedLimits } from '../gateway/harness.ts';

let searxng: ScriptedSearxng;
let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let second: TestApp;
let callback: CallbackServer;

beforeAll(async () => {
  searxng = await startScriptedSearxng();
  mode = await realMode();
  const config = { ...relaxedLimits, search: { provider: 'searxng', searxng: { url: searxng.url, timeoutMs: 2000 }, maxResults: 10, cacheSeconds: 0 } };
  app = await startApp(mode.config, { config });
  // A second instance on the same PostgreSQL and Redis: revocations must reach it at once.
  second = await startApp(mode.config, { config });
  callback = await startCallbackServer();
});

afterAll(async () => {
  await callback?.close();
  await second?.close();
  await app?.close();
  await searxng?.close();
  await mode?.cleanup();
});

async function signedIn(member: Person, target = app, clientName?: string): Promise<{ client: Client; provider: MemoryOAuthProvider }> {
  const provider = new MemoryOAuthProvider(callback.url, clientName);
  const client = await signInAndConnect(target.url, provider, (url) => decideAs(member.web, url));
  return { client, provider };
}

const SESSIONS = '{ sessions { id kind clientName ip current } }';

describe('signing an MCP client in by OAuth (authorization code + PKCE, dynamic registration)', () => {
  it('discovers from the 401, registers, is approved, exchanges the code, lists and calls web_search billed to the member', async () => {
    const member = await seed(app).member();
    const { client, provider } = await signedIn(member);

    // What the SDK did on the way: PKCE S256, the MCP resource, the scope from the metadata, our state.
    const asked = provider.authorizationUrl!;
    expect(asked.origin + asked.pathname).toBe(`${app.url}/oauth/authorize`);
    expect(Object.fromEntries(asked.searchParams)).toMatchObject({
      response_type: 'code',
      code_challenge_method: 'S256',
      redirect_uri: callback.url,
      resource: `${app.url}/v1/mcp`,
      scope: 'mcp',
      state: provider.expectedState,
    });
    expect(provider.client).toMatchObject({ client_id: expect.stringMatching(/^[0-9a-f-]{36}$/), token_endpoint_auth_method: 'none' });
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', scope: 'mcp', expires_in: 3600, access_token: expect.stringMatching(/^svc_mcp_/), refresh_token: expect.stringMatching(/^svc_mcr_/) });

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['web_search']);
    const result = await client.callTool({ name: 'web_search', arguments: { query: 'oauth signed in', maxResults: 2 } });
    expect(result.isError).toBeFalsy();
    assertSvcSearchV1(result.structuredContent);
    const [row] = await ledgerRows(mode.database, member.id, 1);
    expect(row).toMatchObject({ product: 'search', model: 'svc-2.1-search', status: 'ok', payer_id: member.id });
    expect(Number(row!.cost_micros)).toBeGreaterThan(0);

    // The REST tool call takes the token too.
    const rest = await fetch(`${app.url}/v1/mcp/tools/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.saved!.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'web_search', arguments: { query: 'oauth rest call' } }),
    });
    expect(rest.status).toBe(200);
    await client.close();
  });

  it('sends a denial back to the client as error=access_denied with its state, and no code', async () => {
    const member = await seed(app).member();
    const provider = new MemoryOAuthProvider(callback.url);
    await expect(new Client({ name: 'denied', version: '1' }).connect(mcpTransport(app.url, provider))).rejects.toThrow();
    const landed = await decideAs(member.web, provider.authorizationUrl!, 'deny');
    expect(landed.origin + landed.pathname).toBe(callback.url);
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe(provider.expectedState);
    expect(landed.searchParams.get('iss')).toBe(app.url);
    expect(landed.searchParams.get('code')).toBeNull();
  });
});

describe('an MCP access token is for the MCP endpoints only', () => {
  it('is refused (401) on chat completions, models, usage, GraphQL and key management', async () => {
    const member = await seed(app).member();
    const { client, provider } = await signedIn(member);
    await client.close();
    const auth = { authorization: `Bearer ${provider.saved!.access_token}` };
    const chat = await fetch(`${app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(401);
    const body = (await chat.json()) as { code: string; message: string };
    expect(body.code).toBe('sign_in_required');
    expect(body.message).toContain('only on /v1/mcp');
    for (const path of ['/v1/models', '/api/membership/usage', '/api/membership/auth/api-keys']) {
      expect((await fetch(`${app.url}${path}`, { headers: auth })).status, path).toBe(401);
    }
    const graphql = await fetch(`${app.url}/graphql`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { email } }' }) });
    expect(graphql.status).toBe(401);
    expect(await graphql.json()).toMatchObject({ code: 'sign_in_required' });
    // Nor is a refresh token a bearer credential anywhere.
    const refresh = await fetch(`${app.url}/v1/mcp`, { method: 'POST', headers: { authorization: `Bearer ${provider.saved!.refresh_token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(refresh.status).toBe(401);
  });
});

describe('the member sees and ends MCP clients with their sessions', () => {
  it('lists the client (kind mcp); revoking it on one instance refuses the token on the other at once', async () => {
    const member = await seed(app).member();
    const { client, provider } = await signedIn(member, app, 'Claude Code (svc test)');
    await client.close();
    // Warm the second instance's credential cache with the token.
    const onSecond = new Client({ name: 'second', version: '1' });
    await onSecond.connect(mcpTransport(second.url, provider));
    await onSecond.listTools();

    const listed = await member.web.graphql<{ sessions: { id: string; kind: string; clientName: string; ip: string; current: boolean }[] }>(SESSIONS);
    const grant = listed.data!.sessions.find((session) => session.kind === 'mcp');
    expect(grant).toMatchObject({ clientName: 'Claude Code (svc test)', ip: '127.0.0.1', current: false });

    const revoked = await member.web.graphql<{ revokeSession: { id: string; kind: string } }>('mutation($id: ID!) { revokeSession(id: $id) { id kind } }', { id: grant!.id });
    expect(revoked.data?.revokeSession).toEqual({ id: grant!.id, kind: 'mcp' });
    const post = (base: string) =>
      fetch(`${base}/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${provider.saved!.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    // Pub/sub is the fast path; the outbox guarantees it within a second or so.
    let status = 200;
    for (let i = 0; i < 20 && status !== 401; i++) {
      status = (await post(second.url)).status;
      if (status !== 401) await sleep(100);
    }
    expect(status).toBe(401);
    expect((await post(app.url)).status).toBe(401);
    // The refresh token died with the grant.
    const refreshed = await refresh(provider);
    expect(refreshed.status).toBe(400);
    expect(await refreshed.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await member.web.graphql<{ sessions: { kind: string }[] }>(SESSIONS)).data!.sessions.some((session) => session.kind === 'mcp')).toBe(false);
    await onSecond.close().catch(() => undefined);
  });

  it('"sign out everywhere else" ends MCP clients too', async () => {
    const member = await seed(app).member();
    const { client, provider } = await signedIn(member);
    await client.close();
    const ended = await member.web.graphql<{ revokeOtherSessions: number }>('mutation { revokeOtherSessions }');
    expect(ended.data?.revokeOtherSessions).toBe(1);
    const tools = await fetch(`${app.url}/v1/mcp/tools/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${provider.saved!.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'web_search', arguments: { query: 'after sign out' } }),
    });
    expect(tools.status).toBe(401);
  });

  it('staff ending an account’s sessions, or disabling it, refuses its MCP clients too', async () => {
    const support = await seed(app).staff('support');
    const toolsList = (token: string) =>
      fetch(`${app.url}/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });

    const ended = await seed(app).member();
    const first = await signedIn(ended);
    await first.client.close();
    expect((await toolsList(first.provider.saved!.access_token)).status).toBe(200);
    const end = await support.web.graphql<{ endSessions: number }>('mutation($id: ID!) { endSessions(accountId: $id, reason: "lost laptop") }', { id: ended.id });
    expect(end.data?.endSessions).toBe(2);
    expect((await toolsList(first.provider.saved!.access_token)).status).toBe(401);

    const disabled = await seed(app).member();
    const second = await signedIn(disabled);
    await second.client.close();
    await support.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "abuse") { id } }', { id: disabled.id });
    const refused = await toolsList(second.provider.saved!.access_token);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'account_disabled' });
  });
});

function refresh(provider: MemoryOAuthProvider, token = provider.saved!.refresh_token!): Promise<Response> {
  return fetch(`${app.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: provider.client!.client_id, resource: `${app.url}/v1/mcp` }),
  });
}

describe('refresh tokens rotate', () => {
  it('a refresh gives a new pair that works; presenting the spent refresh token again revokes the grant', async () => {
    const member = await seed(app).member();
    const { client, provider } = await signedIn(member);
    await client.close();
    const spent = provider.saved!.refresh_token!;
    const first = await refresh(provider);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const tokens = (await first.json()) as { access_token: string; refresh_token: string; expires_in: number; token_type: string; scope: string };
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'mcp', expires_in: 3600 });
    expect(tokens.refresh_token).not.toBe(spent);
    provider.saveTokens({ ...provider.saved!, ...tokens });
    const renewed = new Client({ name: 'renewed', version: '1' });
    await renewed.connect(mcpTransport(app.url, provider));
    expect((await renewed.listTools()).tools).toHaveLength(1);
    await renewed.close();

    // Someone replays the refresh token that was already used: the grant is taken as stolen and ends.
    const replay = await refresh(provider, spent);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
    const after = await fetch(`${app.url}/v1/mcp/tools/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'web_search', arguments: { query: 'after replay' } }),
    });
    expect(after.status).toBe(401);
    expect((await refresh(provider, tokens.refresh_token)).status).toBe(400);
  });

  it('the SDK client refreshes an expired access token by itself', async () => {
    const member = await seed(app).member();
    const { client, provider } = await signedIn(member);
    await client.close();
    const before = provider.saved!.access_token;
    await mode.database.query(
      `update oauth_token set expires_at = now() - interval '1 second' where kind = 'access' and authorization_id in (select id from oauth_authorization where account_id = $1)`,
      [member.id],
    );
    // Cached lookups carry the expiry too; drop them so this instance looks again (as a restart would).
    await app.app.services.identity.invalidateAccount(member.id);
    const again = new Client({ name: 'again', version: '1' });
    await again.connect(mcpTransport(app.url, provider));
    expect((await again.listTools()).tools).toHaveLength(1);
    expect(provider.saved!.access_token).toMatch(/^svc_mcp_/);
    expect(provider.saved!.access_token).not.toBe(before);
    await again.close();
  });
});

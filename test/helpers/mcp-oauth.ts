/**
 * An MCP client that signs in by OAuth, as Claude Code, Cursor or VS Code do: the official SDK's
 * `StreamableHTTPClientTransport` with an `OAuthClientProvider` that registers dynamically and keeps what
 * it is given in memory, and a local callback server where the browser lands with the code (or the error).
 * Who approves — a Chromium page or a signed-in `Browser` calling the consent page's mutation — is the
 * test's choice (`approve`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from './browser.ts';

/** Keeps registration, tokens and the PKCE verifier in memory; remembers where it was sent to sign in. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  readonly clientName: string;
  readonly expectedState = `state-${randomBytes(8).toString('hex')}`;
  authorizationUrl: URL | null = null;
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  #verifier = '';

  constructor(redirectUrl: string, clientName = 'svc test MCP client') {
    this.redirectUrl = redirectUrl;
    this.clientName = clientName;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return this.expectedState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}

/** A loopback HTTP server standing in for the client's redirect URI: it records where the browser landed. */
export interface CallbackServer {
  url: string;
  /**
   * The browser's arrival (with `code` or `error`) that carries this `state`. Keyed by state so that a test
   * which gave up early cannot leave a waiter behind that takes the next test's arrival.
   */
  next(state: string): Promise<URL>;
  close(): Promise<void>;
}

export async function startCallbackServer(path = '/callback'): Promise<CallbackServer> {
  const waiting = new Map<string, (url: URL) => void>();
  const arrived = new Map<string, URL>();
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    // Browsers ask for other things too (a favicon): only the callback path is an arrival.
    if (url.pathname !== path) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>Signed in</title><p>You can close this window.</p>');
    const state = url.searchParams.get('state') ?? '';
    const resolve = waiting.get(state);
    waiting.delete(state);
    if (resolve) resolve(url);
    else arrived.set(state, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    next: (state) => {
      const first = arrived.get(state);
      arrived.delete(state);
      return first ? Promise.resolve(first) : new Promise<URL>((resolve) => waiting.set(state, resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function mcpTransport(base: string, provider: OAuthClientProvider): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { authProvider: provider });
}

/**
 * The whole sign-in as a client runs it: connect (401 → discovery → registration → the authorize URL),
 * `approve` takes the browser from the authorize URL to the redirect URI and returns where it landed, the
 * code is exchanged (`finishAuth`), and a new connection uses the token.
 */
export async function signInAndConnect(base: string, provider: MemoryOAuthProvider, approve: (authorizeUrl: URL) => Promise<URL>): Promise<Client> {
  const first = new Client({ name: 'svc-oauth-test', version: '1.0.0' });
  const transport = mcpTransport(base, provider);
  const refused = await first.connect(transport).then(
    () => null,
    (error: unknown) => error,
  );
  if (!(refused instanceof UnauthorizedError)) throw new Error(`expected the first connection to need sign-in, got ${String(refused)}`);
  if (!provider.authorizationUrl) throw new Error('the client was not sent to sign in');
  const landed = await approve(provider.authorizationUrl);
  const code = landed.searchParams.get('code');
  if (!code) throw new Error(`no code on the redirect: ${landed.href}`);
  await transport.finishAuth(code);
  const client = new Client({ name: 'svc-oauth-test', version: '1.0.0' });
  await client.connect(mcpTransport(base, provider));
  return client;
}

/** Follows `GET /oauth/authorize` to the consent page's request id (what the browser would open). */
export async function consentRequestId(authorizeUrl: URL): Promise<string> {
  const response = await fetch(authorizeUrl, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (response.status !== 302 || !location) throw new Error(`authorize answered ${response.status}`);
  const id = new URL(location).searchParams.get('request');
  if (!id) throw new Error(`authorize did not send the browser to the consent page: ${location}`);
  return id;
}

const DECIDE = (field: 'approveOAuthAuthorization' | 'denyOAuthAuthorization') =>
  `mutation($id: ID!) { ${field}(id: $id) { redirectTo request { state clientName redirectHost } } }`;

/** The consent page's decision, made by a signed-in browser session without a page: returns where the browser goes next. */
export async function decideAs(browser: Browser, authorizeUrl: URL, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const id = await consentRequestId(authorizeUrl);
  const field = decision === 'approve' ? 'approveOAuthAuthorization' : 'denyOAuthAuthorization';
  const result = await browser.graphql<Record<string, { redirectTo: string }>>(DECIDE(field), { id });
  const redirectTo = result.data?.[field]?.redirectTo;
  if (!redirectTo) throw new Error(`the ${decision} failed: ${JSON.stringify(result.errors)}`);
  return new URL(redirectTo);
}

/**
 * A `Browser` for tests: keeps the session cookie and sends our Origin, like the web app in a real
 * browser; GraphQL with a bearer credential; unique emails and addresses so tests can run side by side.
 */
import { appAt } from './app.ts';

export { freePort } from './app.ts';

export interface GraphQLError {
  message: string;
  extensions?: Record<string, unknown> & { code?: string; stage?: string; requestId?: string };
}

export interface GraphQLResult<T> {
  /** HTTP status and `x-svc-request-id` of the answer. */
  status: number;
  requestId: string | null;
  data?: T | null;
  errors?: GraphQLError[];
}

/** A browser: remembers `svc_membership_session` and sends our Origin on every request. */
export class Browser {
  cookie: string | null = null;
  readonly base: string;
  readonly origin: string;
  /** Sent as X-Forwarded-For, for servers that trust 127.0.0.1 as a proxy: each browser its own address. */
  ip: string | null = null;

  constructor(base: string, origin = base, cookie: string | null = null) {
    this.base = base;
    this.origin = origin;
    this.cookie = cookie;
  }

  /** The same browser (same cookie) talking to another instance of the service. */
  at(base: string): Browser {
    return new Browser(base, base, this.cookie);
  }

  async fetch(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { origin: this.origin, ...(this.ip ? { 'x-forwarded-for': this.ip } : {}), ...init.headers };
    if (this.cookie) headers.cookie = `svc_membership_session=${this.cookie}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.base}${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    for (const line of response.headers.getSetCookie()) {
      const match = /^svc_membership_session=([^;]*)/.exec(line);
      if (match) this.cookie = match[1] || null;
    }
    return response;
  }

  async graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<GraphQLResult<T>> {
    return readGraphQL<T>(await this.fetch('/graphql', { body: { query, variables } }));
  }

  /**
   * Signs up as the web app does: the sign-up (202, a code is emailed), then the code from the app's
   * outbox (the app must run in this process) to create the account and sign in. Answers the verify.
   */
  async signUp(email: string, password = 'correct horse battery'): Promise<Response> {
    const started = await this.fetch('/api/membership/auth/signup', { body: { email, password } });
    if (started.status !== 202) throw new Error(`sign-up failed: ${started.status} ${await started.text()}`);
    const code = mailedCode(this.base, email);
    const response = await this.fetch('/api/membership/auth/email-code/verify', { body: { email, code } });
    if (response.status !== 200) throw new Error(`sign-up code refused: ${response.status} ${await response.text()}`);
    return response;
  }
}

/** The 6-digit code in the newest mail the app at `base` sent to `email` (its development outbox). */
export function mailedCode(base: string, email: string): string {
  const app = appAt(base);
  if (!app) throw new Error(`no app of this process serves ${base}: read the code from its outbox yourself`);
  const text = app.services.mailer.lastTo(email)?.text ?? '';
  const code = /\b(\d{6})\b/.exec(text)?.[1];
  if (!code) throw new Error(`no code mailed to ${email}`);
  return code;
}

/** GraphQL over HTTP with a bearer credential (no cookie). */
export async function bearerGraphQL<T>(base: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<GraphQLResult<T>> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return readGraphQL<T>(response);
}

async function readGraphQL<T>(response: Response): Promise<GraphQLResult<T>> {
  const body = (await response.json()) as { data?: T | null; errors?: GraphQLError[] };
  return { status: response.status, requestId: response.headers.get('x-svc-request-id'), ...body };
}

let addresses = 0;
/** A fresh documentation-range address (198.18.0.0/15) for `Browser.ip`. */
export function uniqueIp(): string {
  addresses += 1;
  return `198.18.${(addresses >> 8) & 255}.${addresses & 255}`;
}

let counter = 0;
/** A fresh address (on `domain`: sign-up throttles count per domain). */
export function uniqueEmail(tag: string, domain = 'example.com'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@${domain}`;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

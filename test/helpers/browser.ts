/**
 * A `Browser` for tests: keeps the session cookie and sends our Origin, like the web app in a real
 * browser; unique emails and addresses so tests can run side by side.
 */
export { freePort } from './app.ts';

export interface GraphQLResult<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; stage?: string } }[];
}

/** A browser: remembers `svc_membership_session` and sends our Origin on every request. */
export class Browser {
  cookie: string | null = null;
  readonly base: string;
  readonly origin: string;
  /** Sent as X-Forwarded-For, for servers that trust 127.0.0.1 as a proxy: each browser its own address. */
  ip: string | null = null;

  constructor(base: string, origin = base) {
    this.base = base;
    this.origin = origin;
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
    const response = await this.fetch('/graphql', { body: { query, variables } });
    return (await response.json()) as GraphQLResult<T>;
  }

  async signUp(email: string, password = 'correct horse battery'): Promise<Response> {
    const response = await this.fetch('/api/membership/auth/signup', { body: { email, password } });
    if (response.status !== 201) throw new Error(`sign-up failed: ${response.status} ${await response.text()}`);
    return response;
  }
}

let addresses = 0;
/** A fresh documentation-range address (198.18.0.0/15) for `Browser.ip`. */
export function uniqueIp(): string {
  addresses += 1;
  return `198.18.${(addresses >> 8) & 255}.${addresses & 255}`;
}

let counter = 0;
export function uniqueEmail(tag: string): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@example.com`;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

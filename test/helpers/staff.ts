/**
 * Seeds people for staff and authz tests and talks to the app the way they would: a browser with the
 * session cookie and our Origin, or a bearer key. Each call makes fresh accounts, so tests own their data.
 *
 *   const people = seed(app);
 *   const admin = await people.staff('admin');
 *   const member = await people.member();
 *   await admin.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "spam") { id } }', { id: member.id });
 *   const token = await member.key();
 */
import type { FastifyInstance } from 'fastify';
import type { AccountRole } from '../../server/modules/account/account.entity.ts';

export interface GraphQLError {
  message: string;
  extensions?: Record<string, unknown> & { code?: string; stage?: string; requestId?: string };
}

export interface GraphQLResponse<T> {
  status: number;
  requestId: string | null;
  data?: T | null;
  errors?: GraphQLError[];
}

/** A browser signed in to one account: keeps its session cookie, sends our Origin. */
export class WebClient {
  readonly base: string;
  cookie: string | null;

  constructor(base: string, cookie: string | null = null) {
    this.base = base;
    this.cookie = cookie;
  }

  /** The same browser talking to another instance of the service (same database and Redis). */
  at(base: string): WebClient {
    return new WebClient(base, this.cookie);
  }

  async fetch(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { origin: this.base, ...init.headers };
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

  async graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<GraphQLResponse<T>> {
    return readGraphQL<T>(await this.fetch('/graphql', { body: { query, variables } }));
  }
}

/** GraphQL over HTTP with a bearer credential (no cookie). */
export async function bearerGraphQL<T>(base: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<GraphQLResponse<T>> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return readGraphQL<T>(response);
}

async function readGraphQL<T>(response: Response): Promise<GraphQLResponse<T>> {
  const body = (await response.json()) as { data?: T | null; errors?: GraphQLError[] };
  return { status: response.status, requestId: response.headers.get('x-svc-request-id'), ...body };
}

export interface Person {
  id: string;
  email: string;
  role: AccountRole;
  password: string;
  /** This person's browser, signed in (a fresh web session). */
  web: WebClient;
  /** Mints a personal API key and returns its token. */
  key(name?: string): Promise<string>;
}

interface Target {
  app: FastifyInstance;
  url: string;
}

let counter = 0;

/** A fresh address on its own domain (sign-up throttles count per domain). */
export function freshEmail(tag: string, domain = 'example.com'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@${domain}`;
}

export function seed(target: Target) {
  const services = target.app.services;
  const person = async (role: AccountRole, tag: string): Promise<Person> => {
    const email = freshEmail(tag);
    const password = 'correct horse battery staple';
    const { account } = await services.accounts.createUser({ email, password, role });
    const { token } = await services.sessions.startWebSession(account.id, { ip: '127.0.0.1', userAgent: 'test browser' });
    return {
      id: account.id,
      email,
      role,
      password,
      web: new WebClient(target.url, token),
      key: async (name = 'test key') => (await services.apiKeys.createForAccount(account.id, { name })).token,
    };
  };
  return {
    member: (tag = 'member') => person('member', tag),
    staff: (role: 'support' | 'admin', tag: string = role) => person(role, tag),
  };
}

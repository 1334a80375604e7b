/**
 * Boots the real app for identity tests on a port chosen up front, so `server.baseUrl` (the OAuth issuer
 * and the device verification URI) is the address clients really use. Helpers act like a browser: they
 * keep the session cookie and send our Origin.
 */
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../../server/app.ts';
import { parseConfig, type Config } from '../../../server/config/config.ts';
import { mergeDeep } from '../../../server/config/merge.ts';
import { createLogger } from '../../../server/log.ts';

export interface IdentityApp {
  app: FastifyInstance;
  config: Config;
  url: string;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

export async function bootIdentityApp(base: Record<string, unknown>, extra: Record<string, unknown> = {}, logLines?: string[]): Promise<IdentityApp> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = parseConfig(mergeDeep(mergeDeep(base, { server: { baseUrl: url, webUrl: url } }), extra));
  const logger = logLines
    ? createLogger({ server: { ...config.server, logLevel: 'debug' } }, { write: (line: string) => void logLines.push(line) })
    : pino({ level: 'silent' });
  const app = await buildApp(config, { logger });
  await app.listen({ port, host: '127.0.0.1' });
  return { app, config, url, close: () => app.close() };
}

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

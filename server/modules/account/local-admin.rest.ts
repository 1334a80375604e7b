/**
 * The way `svc admin create-user` reaches a running svc that holds the embedded database (PGlite allows one
 * process per data directory, so the CLI cannot open it alongside). Only in embedded mode: once listening,
 * the server writes `<dataDir>/local-admin.json` (mode 0600: its pid, port and a fresh 256-bit secret) and
 * answers `POST /api/local-admin/create-user` only to a caller on this machine (a loopback peer that is not a
 * proxy relaying someone else) presenting that secret as a bearer token; anyone else gets the same 404 as
 * an unknown route. Whoever can read the file can already read the database files beside it, so the
 * secret grants nothing new. The file is removed at shutdown.
 */
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { fromThisMachine } from '../../http/metrics-access.ts';
import { accountRoles, type AccountRole } from '../../authz/principal.ts';
import { bootstrapUser } from './bootstrap-user.ts';

export const localAdminFileName = 'local-admin.json';
export const localAdminCreateUserPath = '/api/local-admin/create-user';

/** What the file holds. */
export interface LocalAdminHandle {
  pid: number;
  port: number;
  token: string;
}

export async function localAdminRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const { config } = services;
  const path = resolve(config.database.dataDir, localAdminFileName);
  const token = randomBytes(32).toString('base64url');
  const trusted = proxyAddr.compile(config.server.trustedProxies);
  const access = { settings: config.metrics, isTrustedProxy: (address: string) => trusted(address, 0) };

  app.addHook('onListen', async () => {
    const address = app.server.address();
    if (typeof address !== 'object' || address === null) return;
    const handle: LocalAdminHandle = { pid: process.pid, port: address.port, token };
    // Created afresh (never reusing a file someone else made, whatever its mode), readable by this user only.
    rmSync(path, { force: true });
    writeFileSync(path, `${JSON.stringify(handle)}\n`, { mode: 0o600, flag: 'wx' });
  });
  app.addHook('onClose', async () => {
    try {
      if ((JSON.parse(readFileSync(path, 'utf8')) as LocalAdminHandle).token === token) rmSync(path, { force: true });
    } catch {
      // Gone already, or another server's: leave it.
    }
  });

  app.post(localAdminCreateUserPath, async (request) => {
    if (!fromThisMachine(request.raw, access) || !bearerIs(request.headers.authorization, token)) {
      throw new AppError('not_found', bilingual('No route for {method} {path}.', '没有 {method} {path} 这个路由。', { method: 'POST', path: localAdminCreateUserPath }));
    }
    const body = (request.body ?? {}) as Record<string, unknown>;
    const role = body.role as AccountRole;
    if (typeof body.email !== 'string' || !accountRoles.includes(role) || (body.password !== null && typeof body.password !== 'string')) {
      throw new AppError('invalid_request', bilingual('Expected a JSON object with email, password (or null), role and emailCode.', '应为包含 email、password（或 null）、role 和 emailCode 的 JSON 对象。'));
    }
    const result = await bootstrapUser(services, { email: body.email, password: body.password as string | null, role, emailCode: body.emailCode === true }, 'svc admin create-user (through the running server)');
    return { ok: true, ...result };
  });
}

/** Compared as SHA-256 digests: constant time, whatever the length of what was sent. */
function bearerIs(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

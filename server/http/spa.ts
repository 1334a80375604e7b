/**
 * The built React app (Vite output in `web.distDir`): hashed assets as static files, and `index.html`
 * for every page route so the client router takes over.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config/config.ts';
import { AppError } from '../errors/app-error.ts';

export const pageRoutes = ['/', '/pricing', '/account', '/account/usage', '/device', '/enterprise', '/enterprise/*', '/docs', '/docs/*', '/admin', '/admin/*'];

/** The built app's `index.html`, or null when the web app is not built. */
export function webIndex(config: Config): string | null {
  const indexFile = resolve(config.web.distDir, 'index.html');
  return existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : null;
}

export async function spaRoutes(app: FastifyInstance): Promise<void> {
  const distDir = resolve(app.services.config.web.distDir);
  const indexFile = resolve(distDir, 'index.html');
  const built = existsSync(indexFile);
  if (built) {
    await app.register(fastifyStatic, { root: distDir, wildcard: false, index: false, cacheControl: false, setHeaders: assetHeaders });
  } else {
    app.log.warn({ distDir }, 'web app is not built: page routes answer 503 until `npm run build` has run');
  }
  const index = built ? readFileSync(indexFile, 'utf8') : '';
  for (const url of pageRoutes) {
    app.get(url, async (_request, reply) => {
      if (!built) throw new AppError('service_unavailable', 'The web app has not been built yet; run `npm run build`.');
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index);
    });
  }
}

function assetHeaders(reply: FastifyReply, path: string): void {
  // Vite fingerprints everything under assets/, so it can be cached for good.
  reply.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
}

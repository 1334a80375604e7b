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
import { requestLocale, type Locale, type Localized } from '../i18n/locale.ts';

export const pageRoutes = ['/', '/pricing', '/account', '/account/usage', '/account/usage/*', '/account/alerts', '/account/credits', '/device', '/enterprise', '/enterprise/*', '/docs', '/docs/*', '/admin', '/admin/*', '/account/billing', '/account/billing/*', '/checkout/*', '/account/orders/*', '/payments/sandbox/*', '/oauth/consent'];

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
  const pages = built ? localizedIndex(readFileSync(indexFile, 'utf8')) : null;
  for (const url of pageRoutes) {
    app.get(url, async (request, reply) => {
      if (!pages) throw new AppError('service_unavailable', 'The web app has not been built yet; run `npm run build`.');
      // The language is known before any script runs, so the first paint (fonts, line breaking, the
      // screen reader's voice) is already right; the app then renders its text in the same language.
      const locale = requestLocale(request.headers);
      return (
        reply
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-cache')
          .header('vary', 'Cookie, Accept-Language')
          // No page may be framed by another site: the approval pages (device login, an MCP client's OAuth
          // consent) act on one click, which a page framing them invisibly could trick out of a member.
          .header('x-frame-options', 'DENY')
          .header('content-security-policy', "frame-ancestors 'none'")
          .send(pages[locale])
      );
    });
  }
}

/** What `index.html` says before the app has rendered, per language: `<html lang>`, the description, `<noscript>`. */
const shellText: Localized<{ description: string; noscript: string }> = {
  en: {
    description: 'svc: a self-hostable, OpenAI-compatible LLM gateway with Free, Pro and Max plans.',
    noscript: "svc's web app needs JavaScript. The API itself works without it: point any OpenAI SDK at /v1.",
  },
  'zh-CN': {
    description: 'svc：可自行部署、兼容 OpenAI 接口的大模型网关，提供 Free、Pro 和 Max 套餐。',
    noscript: 'svc 网页版需要启用 JavaScript。API 本身不受影响：把任意 OpenAI SDK 指向 /v1 即可。',
  },
};

export function localizedIndex(html: string): Localized<string> {
  const page = (locale: Locale) =>
    html
      .replace(/<html lang="[^"]*"/, `<html lang="${locale}"`)
      .replace(/(<meta name="description" content=")[^"]*(")/, `$1${escapeHtml(shellText[locale].description)}$2`)
      .replace(/(<noscript>)[\s\S]*?(<\/noscript>)/, `$1${escapeHtml(shellText[locale].noscript)}$2`);
  return { en: page('en'), 'zh-CN': page('zh-CN') };
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('"', '&quot;');
}

function assetHeaders(reply: FastifyReply, path: string): void {
  // Vite fingerprints everything under assets/, so it can be cached for good.
  reply.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
}

/**
 * `GET|HEAD /v1/media/<id>.<ext>`: stored images and audio (DESIGN §8.5). No credential: the 128-bit id
 * is the capability, as in a chat reply's Markdown image link that any client renders.
 *
 * Caching: objects never change, so `immutable` with the ETag `"<id>"`, fresh until retention deletes
 * them. `private`, because a capability URL is a secret: a shared cache (a corporate proxy, a CDN) would
 * keep and hand out copies past retention and outside our control; the user's own browser may keep it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.ts';
import { parseMediaName, type ByteRange } from './media.storage.ts';

export const mediaPath = '/v1/media';

export async function mediaRoutes(app: FastifyInstance): Promise<void> {
  const { media } = app.services;

  // A wildcard, not `:name`: an over-long or oddly encoded name must be a 404 like any other unknown one,
  // not the router's 400 for long parameters.
  const handler = async (request: FastifyRequest<{ Params: { '*': string } }>, reply: FastifyReply) => {
    const ref = parseMediaName(request.params['*']);
    if (!ref) throw notFound();
    const info = await storageCall(() => media.storage.stat(ref));
    if (!info) throw notFound();

    const etag = `"${info.id}"`;
    const maxAge = Math.max(0, Math.floor((media.expiresAt(info.createdAt).getTime() - Date.now()) / 1000));
    const validators = {
      etag,
      'last-modified': info.createdAt.toUTCString(),
      'cache-control': `private, max-age=${maxAge}, immutable`,
    };
    // If-None-Match is evaluated before Range (RFC 9110 §13.2.2).
    if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).headers(validators).send();

    const rangeHeader = request.headers['if-range'] === undefined || request.headers['if-range'] === etag ? request.headers.range : undefined;
    const range = parseRange(rangeHeader, info.size);
    if (range === 'unsatisfiable') {
      throw new AppError('range_not_satisfiable', `The range ${rangeHeader} is outside the file (${info.size} bytes).`, {
        headers: { 'content-range': `bytes */${info.size}` },
      });
    }
    reply.headers({
      ...validators,
      'content-type': info.contentType,
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      'content-disposition': `inline; filename="${info.id}.${info.ext}"`,
    });
    if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${info.size}`);
    const length = range ? range.end - range.start + 1 : info.size;
    reply.header('content-length', String(length));
    if (request.method === 'HEAD' || length === 0) return reply.send();

    const opened = await storageCall(() => media.storage.open(info, range ?? undefined));
    if (!opened) throw notFound();
    return reply.send(opened.body);
  };

  app.get(`${mediaPath}/*`, { exposeHeadRoute: false }, handler);
  app.head(`${mediaPath}/*`, handler);
}

function notFound(): AppError {
  return new AppError('not_found', 'No media at this address: the link is wrong or has expired.');
}

/** Storage trouble (S3 unreachable, disk errors) is a 503 the client may retry, not a 500. */
async function storageCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new AppError('service_unavailable', 'Media storage is unavailable; try again shortly.', { cause: error });
  }
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.trim() === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * One `bytes=` range (RFC 9110 §14.1.2): `a-b`, `a-`, or the suffix `-n`. A header we do not understand,
 * or several ranges, is ignored (the whole file is sent), as the RFC allows.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

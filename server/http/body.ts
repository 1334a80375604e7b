import { errorCodes, type FastifyRequest } from 'fastify';
import secureJsonParse from 'secure-json-parse';
import { AppError, bilingual } from '../errors/app-error.ts';

/** The JSON object body of a request (an empty body counts as `{}`); anything else is a 400. */
export function objectBody(request: Pick<FastifyRequest, 'body'>): Record<string, unknown> {
  const body = request.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('invalid_request', bilingual('The request body must be a JSON object.', '请求体必须是 JSON 对象。'));
  return body as Record<string, unknown>;
}

/** A required string field of a body. */
export function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value.length === 0) throw new AppError('invalid_request', bilingual('{name} is required and must be a string.', '{name} 为必填项，且必须是字符串。', { name }), { param: name });
  return value;
}

/**
 * Fastify's JSON body parser, with its guard against `__proto__` and `constructor` keys run only when the
 * text could hold one: it tests two regular expressions over every body, which on the chat path (1–100 KB
 * of messages) cost more than parsing it. Bodies that mention either word, escape a character (`\u…`
 * could spell one) or start with a byte-order mark take the guarded parse exactly as before.
 */
export function parseJsonBody(_request: FastifyRequest, body: string, done: (error: Error | null, value?: unknown) => void): void {
  let value: unknown;
  try {
    value = parseJson(body);
  } catch (error) {
    done(error as Error);
    return;
  }
  done(null, value);
}

/** Parses a JSON request body as `parseJsonBody` does; throws Fastify's empty- or invalid-body error (`toAppError` maps both). */
export function parseJson(body: string): unknown {
  if (body.length === 0) throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  const guarded = body.charCodeAt(0) === 0xfeff || body.includes('__proto__') || body.includes('constructor') || body.includes('\\u');
  try {
    return guarded ? secureJsonParse.parse(body) : JSON.parse(body);
  } catch {
    throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
}

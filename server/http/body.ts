import type { FastifyRequest } from 'fastify';
import { AppError, bilingual } from '../errors/app-error.ts';

/** The JSON object body of a request (an empty body counts as `{}`); anything else is a 400. */
export function objectBody(request: FastifyRequest): Record<string, unknown> {
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

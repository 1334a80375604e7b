/**
 * Where a request's credential is. svc's own API reads `Authorization: Bearer <key>`; the Anthropic API's
 * clients send the key as `x-api-key` (the Anthropic SDKs, Claude Code with `ANTHROPIC_API_KEY`), or as a
 * bearer token (`ANTHROPIC_AUTH_TOKEN`). Either is accepted on its routes, as an `Authorization` value.
 */
import type { IncomingHttpHeaders } from 'node:http';

export function apiKeyOrBearer(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['x-api-key'];
  return typeof key === 'string' && key.length > 0 ? `Bearer ${key}` : headers.authorization;
}

/**
 * Credential tokens: a type prefix plus 256 bits from the CSPRNG, stored only as their SHA-256. The prefix
 * tells `authenticateBearer` which table to look in without a query per kind.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const tokenPrefixes = {
  personalKey: 'svc_live_',
  enterpriseKey: 'svc_ent_',
  session: 'svc_sess_',
  /** OAuth access tokens of MCP clients: accepted only by the MCP endpoints. */
  mcpAccess: 'svc_mcp_',
  /** OAuth refresh tokens of MCP clients: accepted only by POST /oauth/token, never as a bearer. */
  mcpRefresh: 'svc_mcr_',
} as const;

/** `prefix` + 43 URL-safe characters (32 random bytes). */
export function newToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** One-shot `crypto.hash`: no Hash object per call (it runs for every bearer request). */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** What lists show of a key: its first 12 characters and its last 4. */
export function displayParts(token: string): { prefix: string; last4: string } {
  return { prefix: token.slice(0, 12), last4: token.slice(-4) };
}

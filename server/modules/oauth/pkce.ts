/**
 * PKCE with S256 (RFC 7636), the only method svc accepts: the client sends `code_challenge =
 * BASE64URL(SHA-256(code_verifier))` when it asks, and the verifier itself when it exchanges the code.
 */
import { hash, timingSafeEqual } from 'node:crypto';

/** 43–128 characters of the unreserved set (RFC 7636 §4.1). */
const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/;
/** BASE64URL of a SHA-256 digest: 43 characters, no padding. */
const challengePattern = /^[A-Za-z0-9_-]{43}$/;

export function isCodeChallenge(value: unknown): value is string {
  return typeof value === 'string' && challengePattern.test(value);
}

export function isCodeVerifier(value: unknown): value is string {
  return typeof value === 'string' && verifierPattern.test(value);
}

/** Whether `verifier` is the one `challenge` was made from (constant time). */
export function verifiesS256(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(hash('sha256', verifier, 'base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/**
 * Password hashing: argon2id with m = 19 MiB, t = 2, p = 1 (OWASP ASVS 11.4.2 minimum). The PHC string
 * carries its parameters, so raising them later re-hashes on the next successful sign-in.
 */
import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm } from '@node-rs/argon2';

/** `Algorithm.Argon2id`; the package declares a `const enum`, which type stripping cannot inline. */
const argon2id = 2 as Algorithm;

export const passwordParams = { algorithm: argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 32 } as const;

export const passwordRules = { minLength: 8, maxLength: 256 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, passwordParams);
}

export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  try {
    return await verify(phc, password);
  } catch {
    return false;
  }
}

/** A hash to verify against when the account does not exist, so both answers take the same time. */
let decoy: Promise<string> | null = null;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(32).toString('base64url')).catch((error: unknown) => {
    decoy = null;
    throw error;
  });
  return decoy;
}

/** Whether a stored PHC string uses weaker parameters than `passwordParams`. */
export function needsRehash(phc: string): boolean {
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(phc);
  if (!match) return true;
  const [, m, t, p] = match.map(Number);
  return m! < passwordParams.memoryCost || t! < passwordParams.timeCost || p !== passwordParams.parallelism;
}

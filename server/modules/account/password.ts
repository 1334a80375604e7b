/**
 * Password hashing: argon2id with m = 19 MiB, t = 2, p = 1 (OWASP ASVS 11.4.2 minimum). The PHC string
 * carries its parameters, so raising them later re-hashes on the next successful sign-in.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import type * as ZxcvbnCore from '@zxcvbn-ts/core';
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';
import type * as ZxcvbnCommon from '@zxcvbn-ts/language-common';

/** zxcvbn and its dictionaries (~3 MB of heap) load at the first password set, not with the server. */
const require = createRequire(import.meta.url);

/** `Algorithm.Argon2id`; the package declares a `const enum`, which type stripping cannot inline. */
const argon2id = 2 as Algorithm;

export const passwordParams = { algorithm: argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 32 } as const;

export const passwordRules = { minLength: 8, maxLength: 256, minStrength: 2 } as const;

let estimator: ZxcvbnFactory | null = null;

/**
 * Whether a password is too easy to guess: zxcvbn's estimate (common-password and name dictionaries,
 * keyboard patterns, repeats, dates) below "somewhat guessable" (score 2), or the account's own email or
 * its local part. The dictionaries load on first use.
 */
export function guessablePassword(password: string, email: string): 'email' | 'common' | null {
  const lower = password.trim().toLowerCase();
  const local = email.slice(0, email.lastIndexOf('@'));
  if (lower === email || (local.length >= 4 && lower === local)) return 'email';
  if (!estimator) {
    const { ZxcvbnFactory: Factory } = require('@zxcvbn-ts/core') as typeof ZxcvbnCore;
    const { adjacencyGraphs, dictionary } = require('@zxcvbn-ts/language-common') as typeof ZxcvbnCommon;
    estimator = new Factory({ dictionary, graphs: adjacencyGraphs });
  }
  return estimator.check(password.slice(0, 100), [email, local]).score < passwordRules.minStrength ? 'common' : null;
}

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

/**
 * Where the CLI keeps its session token: `$XDG_CONFIG_HOME/svc/credentials.json` (or `~/.config/svc/…`),
 * directory 0700, file 0600, written atomically.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface StoredCredentials {
  baseUrl: string;
  token: string;
  expiresAt: string;
  email: string;
}

export function credentialsPath(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'svc', 'credentials.json');
}

export function readCredentials(path: string): StoredCredentials | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<StoredCredentials>;
    return typeof parsed.token === 'string' && typeof parsed.baseUrl === 'string' ? (parsed as StoredCredentials) : null;
  } catch {
    return null;
  }
}

export function writeCredentials(path: string, credentials: StoredCredentials): void {
  const dir = join(path, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

export function deleteCredentials(path: string): void {
  rmSync(path, { force: true });
}

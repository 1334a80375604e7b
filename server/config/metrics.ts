/**
 * `metrics.*`: who may read `/metrics` (issue 46). By default only a client on this machine (a loopback
 * socket peer that is not a proxy); `token` lets a scraper anywhere in with `Authorization: Bearer`;
 * `port` moves `/metrics` to a listener of its own (on `host`), and the main port then has none.
 */
import { z } from 'zod';
import { ConfigError } from './config-error.ts';
import { readReference, SecretRefModel } from './payments.ts';

type Env = Record<string, string | undefined>;

/** Shorter tokens are guessable over a long enough scrape history; 32 hex characters are 128 bits. */
const minTokenLength = 32;

export const MetricsModel = z.strictObject({
  /** `env:NAME` or `file:PATH`: every scrape must then send `Authorization: Bearer <token>`. */
  token: SecretRefModel.optional(),
  /** Serve `/metrics` only on this port (and not on `server.port`). */
  port: z.number().int().min(1).max(65_535).optional(),
  /** The address the metrics port listens on. */
  host: z.string().min(1).default('127.0.0.1'),
});

export type MetricsFileConfig = z.infer<typeof MetricsModel>;

export interface MetricsSettings {
  /** The bearer token every scrape must carry, or null: loopback peers only (on the main port). */
  token: string | null;
  /** The separate metrics listener, or null: `/metrics` is on the main port. */
  port: number | null;
  host: string;
}

/** Resolves the token reference; a token that cannot be read or is too short stops the start. */
export function resolveMetrics(input: MetricsFileConfig, env: Env, serverPort: number): MetricsSettings {
  if (input.port !== undefined && input.port === serverPort) {
    throw new ConfigError(`invalid config at metrics.port: ${input.port} is server.port too; pick another port or leave metrics.port unset`);
  }
  let token: string | null = null;
  if (input.token !== undefined) {
    try {
      token = readReference('metrics.token', input.token, env);
    } catch (error) {
      throw new ConfigError(`invalid config at ${(error as Error).message}`);
    }
    if (token.length < minTokenLength) {
      throw new ConfigError(`invalid config at metrics.token: the token is ${token.length} characters; use at least ${minTokenLength} (openssl rand -hex 32)`);
    }
  }
  return { token, port: input.port ?? null, host: input.host };
}

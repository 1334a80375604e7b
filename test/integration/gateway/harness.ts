/**
 * Gateway test harness: the real app (real PostgreSQL + Redis) in front of a scripted upstream, and
 * members with keys, on a plan package of choice.
 */
import type OpenAI from 'openai';
import { startApp, realMode, type StartOptions, type TestApp } from '../../helpers/app.ts';
import type { TestDatabase } from '../../helpers/database.ts';
import { seed } from '../../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream, type ScriptedUpstreamOptions } from '../../fixtures/scripted-upstream.ts';

export interface Harness {
  app: TestApp;
  upstream: ScriptedUpstream;
  database: TestDatabase;
  mode: Awaited<ReturnType<typeof realMode>>;
  member(options?: { planPackage?: string }): Promise<Member>;
  close(): Promise<void>;
}

export interface Member {
  accountId: string;
  email: string;
  key: string;
  client: OpenAI;
}

/** Generous rate limits by default so only tests about limits meet them. */
export const relaxedLimits = { rateLimits: { ipPerMinute: 100_000, concurrentStreamsPerAccount: 1000 } };

export async function startHarness(options: StartOptions & { upstream?: ScriptedUpstreamOptions } = {}): Promise<Harness> {
  const upstream = await startScriptedUpstream(options.upstream);
  const mode = await realMode();
  const app = await startApp(mode.config, { ...options, config: { ...relaxedLimits, ...options.config }, env: { SVC_UPSTREAM_URL: upstream.url, ...options.env } });
  return {
    app,
    upstream,
    database: mode.database,
    mode,
    member: (memberOptions) => createMember(app, memberOptions),
    close: async () => {
      await app.close();
      await upstream.close();
      await mode.cleanup();
    },
  };
}

/** A member (on a plan package of choice) with a personal key and an OpenAI client on it. */
export async function createMember(app: TestApp, options: { planPackage?: string } = {}): Promise<Member> {
  const member = await seed(app).member(options);
  const { key, client } = await member.withKey('gateway test');
  return { accountId: member.id, email: member.email, key, client };
}

export interface LedgerRow {
  request_id: string;
  client_request_id: string | null;
  payer_id: string;
  payer_kind: string;
  product: string;
  unit: string | null;
  unit_quantity: string | null;
  status: string;
  input_tokens: number;
  output_tokens: number;
  estimated: boolean;
  cost_micros: string;
  reserved_micros: string;
  model: string;
  stream: boolean;
  channel: string;
  credential_kind: string;
}

/** Ledger rows of an account, waiting (briefly) until `count` are there. */
export async function ledgerRows(database: TestDatabase, accountId: string, count = 1, timeoutMs = 5000): Promise<LedgerRow[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await database.query('select * from usage_ledger where account_id = $1 order by id', [accountId]);
    if (rows.length >= count || Date.now() > deadline) return rows as LedgerRow[];
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

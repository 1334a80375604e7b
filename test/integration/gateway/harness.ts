/**
 * Gateway test harness: the real app (real PostgreSQL + Redis) in front of a scripted upstream, and
 * members with keys, on a plan package of choice.
 */
import OpenAI from 'openai';
import { startApp, realMode, type StartOptions, type TestApp } from '../../helpers/app.ts';
import type { TestDatabase } from '../../helpers/database.ts';
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

let counter = 0;

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
    member: (memberOptions) => createMember(app, mode.database, memberOptions),
    close: async () => {
      await app.close();
      await upstream.close();
      await mode.cleanup();
    },
  };
}

export async function createMember(app: TestApp, database: TestDatabase, options: { planPackage?: string } = {}): Promise<Member> {
  const email = `member-${process.pid}-${++counter}-${Date.now()}@example.com`;
  const account = await app.app.services.accounts.signUp({ email, password: 'correct horse battery staple' });
  if (options.planPackage) await database.query('update account set plan_package = $1 where id = $2', [options.planPackage, account.id]);
  const { token } = await app.app.services.apiKeys.createForAccount(account.id, { name: 'gateway test' });
  return { accountId: account.id, email, key: token, client: new OpenAI({ apiKey: token, baseURL: `${app.url}/v1`, maxRetries: 0 }) };
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

import type { AccountRole } from '../account/account.entity.ts';

export type CredentialKind = 'web_session' | 'session_token' | 'api_key' | 'enterprise_key';

/**
 * Who pays for a metered call: the caller's own account, or an organisation (an account of kind
 * `organisation`, DESIGN §8.1) whose `svc_ent_` key made the call. Pools, the ledger, rate limits and live
 * usage are keyed by `id`; `package` is the payer's plan package (`free`, `pro`, `max_x5`, `enterprise`, …).
 */
export interface Payer {
  kind: 'account' | 'organisation';
  id: string;
  package: string;
}

/** Who is calling, resolved from a cookie session, a bearer session token or an API key. */
export interface Principal {
  accountId: string;
  email: string;
  role: AccountRole;
  payer: Payer;
  /** The credential that authenticated this call: its kind and its row id (session or key id). */
  credential: { kind: CredentialKind; id: string };
}

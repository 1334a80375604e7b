import type { AccountRole } from '../account/account.entity.ts';

export type CredentialKind = 'web_session' | 'session_token' | 'api_key' | 'enterprise_key';

/** Who is calling, resolved from a cookie session, a bearer session token or an API key. */
export interface Principal {
  accountId: string;
  email: string;
  role: AccountRole;
  /** Plan package of the account (`free`, `pro`, `max_x5`, `max_x20`); see config `plans`. */
  planPackage: string;
  /** The credential that authenticated this call: its kind and its row id (session or key id). */
  credential: { kind: CredentialKind; id: string };
}

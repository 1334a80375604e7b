/** A signed-in person's role: what staff may do is decided from it (`authz.ts`). */
export const accountRoles = ['member', 'support', 'admin'] as const;
export type AccountRole = (typeof accountRoles)[number];

/** `mcp_token`: an OAuth access token of an MCP client, let in only where the caller asks for audience `mcp`. */
export type CredentialKind = 'web_session' | 'session_token' | 'api_key' | 'enterprise_key' | 'mcp_token';

/** Where a bearer request goes, for credentials limited to one place (MCP OAuth tokens: the MCP endpoints). */
export type CredentialAudience = 'mcp';

/** Where a bearer request comes from: the client address (the socket peer, or X-Forwarded-For from a trusted proxy). */
export interface BearerClient {
  ip: string;
  /** Set by the routes that accept audience-limited credentials (the MCP endpoints: `mcp`). */
  audience?: CredentialAudience;
}

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

/**
 * What a key's owner limited it to (issue 51): spend caps per day and month (micros of the configured
 * currency), a requests-per-minute cap below the plan's, and the models it may call. Only keys with at
 * least one limit carry this; admission of every other credential does not look further.
 */
export interface KeyLimits {
  budgetDayMicros: number | null;
  budgetMonthMicros: number | null;
  requestsPerMinute: number | null;
  /** Product model ids; null = every model of the plan. */
  allowedModels: readonly string[] | null;
}

/** Who is calling, resolved from a cookie session, a bearer session token or an API key. */
export interface Principal {
  accountId: string;
  email: string;
  role: AccountRole;
  payer: Payer;
  /** The credential that authenticated this call: its kind and its row id (session or key id). */
  credential: { kind: CredentialKind; id: string; limits?: KeyLimits };
}

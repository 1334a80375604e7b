/**
 * `svc admin create-user` itself (DESIGN §8.2 staff bootstrap): create or update an account with a role, a
 * password or none, audited; with `emailCode`, a sign-in code too. The CLI runs it against the database
 * directly, or — while a running svc holds the embedded database — through that server's loopback-only
 * channel (`local-admin.rest.ts`). Either way the caller is the operator, so a code that could not be
 * emailed is handed back to be shown.
 */
import type { AuditLog } from '../audit/audit.service.ts';
import type { AccountRole } from '../../authz/principal.ts';
import type { AccountService } from './account.service.ts';
import type { Mailer } from './mailer.ts';

export interface BootstrapInput {
  email: string;
  /** null: the account gets no (new) password. */
  password: string | null;
  role: AccountRole;
  emailCode: boolean;
}

export interface BootstrapResult {
  account: { id: string; email: string; role: AccountRole };
  created: boolean;
  /** With `emailCode`: whether it was emailed, else the code itself (no SMTP: it never left this server). */
  signInCode: { emailed: true } | { emailed: false; code: string | null } | null;
}

export interface BootstrapDeps {
  accounts: AccountService;
  audit: AuditLog;
  mailer: Mailer;
}

/** `via` is what the audit log records as the reason: how the operator reached svc. */
export async function bootstrapUser(deps: BootstrapDeps, input: BootstrapInput, via: string): Promise<BootstrapResult> {
  const { account, created, previousRole } = await deps.accounts.createUser({ email: input.email, password: input.password, role: input.role });
  await deps.audit.record({
    actorId: null,
    action: 'admin:create-user',
    targetType: 'account',
    targetId: account.id,
    before: created ? null : { role: previousRole },
    after: { role: account.role, password: input.password === null ? 'unchanged' : 'set', emailCode: input.emailCode },
    reason: via,
  });
  const result: BootstrapResult = { account: { id: account.id, email: account.email, role: account.role }, created, signInCode: null };
  if (input.emailCode) {
    await deps.accounts.startEmailCode({ email: account.email }, {}, { forOperator: true });
    if (deps.mailer.mode === 'smtp') result.signInCode = { emailed: true };
    else result.signInCode = { emailed: false, code: /\b(\d{6})\b/.exec(deps.mailer.lastTo(account.email)?.text ?? '')?.[1] ?? null };
  }
  return result;
}

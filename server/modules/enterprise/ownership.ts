/**
 * How many organisations one account may own (config `enterprise.maxOwnedOrganisations`, default 3).
 *
 * Checked inside the transaction that makes an account an owner — a commercial submit, a staff approval, an
 * ownership hand-over — after locking that account's row (FOR UPDATE). Two such transactions for the same
 * account, on any instance, queue on the lock; the second counts after the first committed (each statement
 * sees what committed before it under READ COMMITTED), so a burst of submits cannot overshoot the limit.
 */
import type { Em } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';

/** Locks `accountId`'s row in `tx` and refuses (409 `organisation_limit_reached`) when it owns `max` already. */
export async function claimOwnership(tx: Em, accountId: string, max: number): Promise<void> {
  const connection = tx.getConnection();
  const context = tx.getTransactionContext();
  await connection.execute('select "id" from "account" where "id" = ? for update', [accountId], 'all', context);
  const row = await connection.execute<{ owned: number }>(
    `select count(*)::int as "owned" from "organisation_member" where "account_id" = ? and "role" = 'owner'`,
    [accountId],
    'get',
    context,
  );
  const owned = Number(row?.owned ?? 0);
  if (owned >= max) throw ownedLimitReached(owned, max);
}

export function ownedLimitReached(owned: number, max: number): AppError {
  return new AppError(
    'organisation_limit_reached',
    bilingual(
      'This account already owns {owned} organisations, the most one account may own ({max}). Hand one over to another member (make them its owner) before creating or taking over another.',
      '该账户已拥有 {owned} 个组织，达到每个账户可拥有的上限（{max} 个）。请先把其中一个组织移交给其他成员（设为所有者），再创建或接手新的组织。',
      { owned, max },
    ),
    { details: { owned, limit: max } },
  );
}

import { Migration } from '@mikro-orm/migrations';

/** Reconciliation sums the ledger per window across all accounts: it reads by creation time. */
export class Migration20261121020002_usage_reconcile extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "usage_ledger_created_idx" on "usage_ledger" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists "usage_ledger_created_idx";');
  }
}

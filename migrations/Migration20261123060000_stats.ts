import { Migration } from '@mikro-orm/migrations';

/**
 * The staff dashboard and account search (issue 10).
 *
 * `stats(range)` sums the ledger over the last 7–90 days by day and model. The covering index lets that be
 * one index-only range scan: every column the query reads rides in the index, so the heap (the wide rows,
 * with request ids and credential ids) is never touched. It starts with `created_at`, so it also serves
 * everything the plain `created_at` index did (reconciliation): that one goes, and the ledger keeps one
 * index per insert, not two.
 *
 * Account search pages newest first on (created_at, id).
 */
export class Migration20261123060000_stats extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index "usage_ledger_stats_idx" on "usage_ledger" ("created_at")
        include ("model", "status", "input_tokens", "output_tokens", "cost_micros", "currency");
    `);
    this.addSql(`drop index if exists "usage_ledger_created_idx";`);
    this.addSql(`create index "account_created_idx" on "account" ("created_at", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "account_created_idx";`);
    this.addSql(`create index if not exists "usage_ledger_created_idx" on "usage_ledger" ("created_at");`);
    this.addSql(`drop index if exists "usage_ledger_stats_idx";`);
  }
}

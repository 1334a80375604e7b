import { Migration } from '@mikro-orm/migrations';

/**
 * Two page views that read rows they did not need (plans in docs/performance-plans.md):
 *
 * - The keys panel (account page, organisation console) sums each key's spend today and this month from
 *   the ledger: with only (credential_id, created_at) indexed, every one of a busy key's rows of the month
 *   was fetched from the heap for its cost (1,046 pages for 1,295 rows at bench scale 0.1). The cost rides
 *   in the index now, so the sum is an index-only scan. Building it locks the ledger for the build (a
 *   partitioned table's index cannot be built concurrently): minutes on a very large ledger.
 * - The dashboard's revenue per day reads orders paid or refunded in the range, and no index had either
 *   time: a scan of every order. Partial indexes on each time, with what the sum needs.
 */
export class Migration20261210051000_covering_page_indexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "usage_ledger_credential_spend_idx" on "usage_ledger" ("credential_id", "created_at") include ("cost_micros");`);
    this.addSql(`drop index if exists "usage_ledger_credential_created_idx";`);
    this.addSql(`create index "billing_order_paid_idx" on "billing_order" ("paid_at") include ("currency", "amount_minor") where "paid_at" is not null;`);
    this.addSql(`create index "billing_order_refunded_idx" on "billing_order" ("refunded_at") include ("currency", "amount_minor") where "refunded_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "billing_order_refunded_idx";`);
    this.addSql(`drop index if exists "billing_order_paid_idx";`);
    this.addSql(`create index if not exists "usage_ledger_credential_created_idx" on "usage_ledger" ("credential_id", "created_at");`);
    this.addSql(`drop index if exists "usage_ledger_credential_spend_idx";`);
  }
}

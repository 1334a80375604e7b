import { Migration } from '@mikro-orm/migrations';

/**
 * Admission leases (issue 16): a row admitted under an instance's lease names it, so when the instance dies
 * the sweeper returns exactly the unused part of the lease (the lease minus what the ledger billed under it).
 */
export class Migration20261124160000_leases extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "usage_ledger" add column "lease_id" varchar(64) null;`);
    this.addSql(`create index "usage_ledger_lease_idx" on "usage_ledger" ("lease_id") where "lease_id" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "usage_ledger_lease_idx";`);
    this.addSql(`alter table "usage_ledger" drop column if exists "lease_id";`);
  }
}

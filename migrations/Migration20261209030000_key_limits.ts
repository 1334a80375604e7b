import { Migration } from '@mikro-orm/migrations';

/**
 * Per-key limits (issue 51 item 1): a personal or organisation key may carry a spend cap per day and per
 * month (micros of the configured currency), a requests-per-minute cap, a model allow-list and an expiry.
 * Embedded mode keeps each capped key's spend per window in `key_spend_counter` (Redis keeps it otherwise),
 * and a reservation names the capped key it was also counted against, so settlement moves both.
 */
export class Migration20261209030000_key_limits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table "api_key"
        add column "budget_day_micros" bigint null,
        add column "budget_month_micros" bigint null,
        add column "requests_per_minute" integer null,
        add column "allowed_models" jsonb null,
        add column "expires_at" timestamptz null;
    `);
    this.addSql(`
      create table "key_spend_counter" (
        "key_id" uuid not null,
        "window_key" varchar(16) not null,
        "used_micros" bigint not null default 0,
        primary key ("key_id", "window_key")
      );
    `);
    this.addSql(`alter table "usage_reservation" add column "cap_key_id" uuid null;`);
    // The keys page sums each key's spend in the current day and month from the ledger.
    this.addSql(`create index if not exists "usage_ledger_credential_created_idx" on "usage_ledger" ("credential_id", "created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "usage_ledger_credential_created_idx";`);
    this.addSql(`alter table "usage_reservation" drop column "cap_key_id";`);
    this.addSql(`drop table if exists "key_spend_counter";`);
    this.addSql(`
      alter table "api_key"
        drop column "budget_day_micros",
        drop column "budget_month_micros",
        drop column "requests_per_minute",
        drop column "allowed_models",
        drop column "expires_at";
    `);
  }
}

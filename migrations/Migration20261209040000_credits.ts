import { Migration } from '@mikro-orm/migrations';

/**
 * Prepaid credit (issue 51 item 4): an append-only ledger of its own (`credit_entry`; balance = sum of
 * entries) beside a per-account balance row that every entry updates in the same transaction, under a
 * check that it never goes below zero — the row lock serialises concurrent spends and redemptions.
 * Codes staff mint in batches; each redemption is a row (unique per code and account) and an entry.
 * A turn paid from credit says so on its usage row (`paid_from_credit` true; null otherwise), so pool
 * reconciliation does not count it against the pools.
 */
export class Migration20261209040000_credits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "credit_balance" (
        "account_id" uuid not null primary key references "account" ("id") on delete cascade,
        "balance_micros" bigint not null default 0 check ("balance_micros" >= 0),
        "currency" varchar(3) not null,
        "pay_from_credit" boolean not null default false,
        "updated_at" timestamptz not null default now()
      );`);
    this.addSql(`
      create table "credit_entry" (
        "id" bigint generated always as identity primary key,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "amount_micros" bigint not null,
        "currency" varchar(3) not null,
        "kind" text not null check ("kind" in ('purchase', 'code', 'spend', 'refund', 'adjustment')),
        "reference" varchar(128) null,
        "note" text null,
        "balance_after_micros" bigint not null check ("balance_after_micros" >= 0),
        "at" timestamptz not null default now()
      );`);
    this.addSql(`create index "credit_entry_account_at_idx" on "credit_entry" ("account_id", "at", "id");`);
    // A paid order, a redeemed code, a turn's spend and its refund each append at most once.
    this.addSql(`create unique index "credit_entry_kind_reference_uniq" on "credit_entry" ("account_id", "kind", "reference") where "reference" is not null;`);
    this.addSql(`
      create table "credit_code_batch" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null default now(),
        "created_by" uuid null,
        "value_micros" bigint not null check ("value_micros" > 0),
        "currency" varchar(3) not null,
        "expires_at" timestamptz null,
        "uses_per_code" integer not null check ("uses_per_code" >= 1),
        "code_count" integer not null check ("code_count" >= 1),
        "note" text null
      );`);
    this.addSql(`
      create table "credit_code" (
        "code" varchar(32) not null primary key,
        "batch_id" uuid not null references "credit_code_batch" ("id") on delete cascade,
        "uses_left" integer not null check ("uses_left" >= 0)
      );`);
    this.addSql(`create index "credit_code_batch_idx" on "credit_code" ("batch_id");`);
    this.addSql(`
      create table "credit_redemption" (
        "code" varchar(32) not null references "credit_code" ("code") on delete cascade,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "at" timestamptz not null default now(),
        "ip" varchar(64) null,
        primary key ("code", "account_id")
      );`);
    this.addSql(`alter table "usage_ledger" add column "paid_from_credit" boolean null;`);
    // Exports page through an account's rows in (time, id) order: this index serves each page in order.
    this.addSql(`create index "usage_ledger_account_created_id_idx" on "usage_ledger" ("account_id", "created_at", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "usage_ledger_account_created_id_idx";`);
    this.addSql(`alter table "usage_ledger" drop column if exists "paid_from_credit";`);
    this.addSql(`drop table if exists "credit_redemption";`);
    this.addSql(`drop table if exists "credit_code";`);
    this.addSql(`drop table if exists "credit_code_batch";`);
    this.addSql(`drop table if exists "credit_entry";`);
    this.addSql(`drop table if exists "credit_balance";`);
  }
}

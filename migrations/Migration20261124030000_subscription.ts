import { Migration } from '@mikro-orm/migrations';

/**
 * Subscriptions (issue 13): one row per account that ever paid, holding its current term (package,
 * period, what was paid, a downgrade waiting for the period end). `version` counts term changes, and an
 * upgrade order remembers the version its credit came from (`billing_order.credit_version`), so a credit
 * is never spent twice.
 */
export class Migration20261124030000_subscription extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "billing_subscription" (
        "account_id" uuid not null primary key references "account" ("id") on delete cascade,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "version" int not null default 1,
        "package_id" varchar(64) not null,
        "currency" char(3) not null,
        "paid_minor" int not null check ("paid_minor" >= 0),
        "period_start" timestamptz not null,
        "period_end" timestamptz not null,
        "anchor_day" smallint not null check ("anchor_day" between 1 and 31),
        "cancel_at_period_end" boolean not null default false,
        "next_package_id" varchar(64) null,
        "next_paid_minor" int null,
        "next_currency" char(3) null,
        "next_months" int not null default 1 check ("next_months" >= 1),
        "ended_at" timestamptz null,
        "last_order_id" varchar(32) null
      );
    `);
    // The period-end job walks the terms that are due, oldest first.
    this.addSql(`create index "billing_subscription_due_index" on "billing_subscription" ("period_end") where "ended_at" is null;`);
    this.addSql(`alter table "billing_order" add column "credit_version" int null;`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table "billing_order" drop column if exists "credit_version";');
    this.addSql('drop table if exists "billing_subscription";');
  }
}

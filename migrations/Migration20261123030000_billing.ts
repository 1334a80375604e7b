import { Migration } from '@mikro-orm/migrations';

/**
 * Payments (issue 13): orders bound to one provider, and every notification received. The uniques are
 * the money rules in the schema: an order number belongs to one provider, a provider's trade pays at most
 * one order, and one event applies at most once.
 */
export class Migration20261123030000_billing extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "billing_order" (
        "id" varchar(32) not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "account_id" uuid not null references "account" ("id") on delete restrict,
        "package_id" varchar(64) not null,
        "provider" text check ("provider" in ('alipay', 'wechat', 'stripe', 'sandbox')) not null,
        "amount_minor" int not null check ("amount_minor" > 0),
        "list_minor" int not null check ("list_minor" > 0),
        "credit_minor" int not null default 0 check ("credit_minor" >= 0),
        "currency" char(3) not null,
        "state" text check ("state" in ('created', 'paid', 'failed', 'expired', 'refunded')) not null default 'created',
        "app_id" varchar(64) null,
        "merchant_id" varchar(64) null,
        "provider_trade_no" varchar(255) null,
        "pay_url" text null,
        "qr_code" text null,
        "expires_at" timestamptz not null,
        "paid_at" timestamptz null,
        "closed_at" timestamptz null,
        "refunded_at" timestamptz null,
        "refund_reason" text null,
        "provider_refund_id" varchar(255) null,
        constraint "billing_order_provider_id_unique" unique ("provider", "id"),
        constraint "billing_order_provider_trade_no_unique" unique ("provider", "provider_trade_no")
      );
    `);
    this.addSql(`create index "billing_order_account_id_index" on "billing_order" ("account_id", "created_at");`);
    // Reconciliation walks the orders still waiting for money, oldest first.
    this.addSql(`create index "billing_order_created_index" on "billing_order" ("created_at") where "state" = 'created';`);
    this.addSql(`
      create table "billing_notice" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "provider" text check ("provider" in ('alipay', 'wechat', 'stripe', 'sandbox')) not null,
        "source" text check ("source" in ('notify', 'query')) not null,
        "verified" boolean not null,
        "outcome" text check ("outcome" in ('applied', 'duplicate', 'failed', 'pending', 'ignored', 'rejected', 'unverified', 'error')) not null,
        "reason" varchar(64) null,
        "detail" text null,
        "order_id" varchar(128) null,
        "event_id" varchar(255) null,
        "provider_trade_no" varchar(255) null,
        "status" varchar(16) null,
        "amount_minor" int null,
        "currency" char(3) null,
        "headers" jsonb null,
        "body" text null,
        "payload" jsonb null
      );
    `);
    this.addSql(`create index "billing_notice_order_id_index" on "billing_notice" ("order_id");`);
    // One applied notice per order and per provider event: a replay can never be applied twice.
    this.addSql(`create unique index "billing_notice_applied_order" on "billing_notice" ("order_id") where "outcome" = 'applied';`);
    this.addSql(`create unique index "billing_notice_applied_event" on "billing_notice" ("provider", "event_id") where "outcome" = 'applied';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "billing_notice";');
    this.addSql('drop table if exists "billing_order";');
  }
}

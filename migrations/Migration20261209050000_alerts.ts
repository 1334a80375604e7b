import { Migration } from '@mikro-orm/migrations';

/**
 * Spend alerts (issue 51 item 2): thresholds per meter (a pool now, a key cap later), the channels an
 * account set (email on or off, one signed webhook), one claim row per threshold crossed per window (its
 * primary key is what makes the alert exactly-once across instances), the in-app notices, and the durable
 * delivery queue that emails and webhooks go through (retried with backoff, worked with SKIP LOCKED).
 */
export class Migration20261209050000_alerts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "alert_threshold" (
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "meter" varchar(100) not null,
        "thresholds" smallint[] not null,
        "updated_at" timestamptz not null default now(),
        primary key ("account_id", "meter")
      );
    `);
    this.addSql(`
      create table "alert_channel" (
        "account_id" uuid not null primary key references "account" ("id") on delete cascade,
        "email_enabled" boolean not null default true,
        "webhook_url" varchar(2048) null,
        "webhook_secret" varchar(100) null,
        "updated_at" timestamptz not null default now()
      );
    `);
    this.addSql(`
      create table "alert_claim" (
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "meter" varchar(100) not null,
        "threshold" smallint not null,
        "window_key" varchar(32) not null,
        "used_micros" bigint not null,
        "limit_micros" bigint not null,
        "claimed_at" timestamptz not null default now(),
        primary key ("account_id", "meter", "threshold", "window_key")
      );
    `);
    this.addSql(`
      create table "alert_notice" (
        "id" uuid not null primary key,
        "recipient_id" uuid not null references "account" ("id") on delete cascade,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "meter" varchar(100) not null,
        "threshold" smallint not null,
        "window_key" varchar(32) not null,
        "used_micros" bigint not null,
        "limit_micros" bigint not null,
        "currency" varchar(3) not null,
        "resets_at" timestamptz not null,
        "created_at" timestamptz not null default now(),
        "read_at" timestamptz null
      );
    `);
    this.addSql(`create index "alert_notice_recipient_idx" on "alert_notice" ("recipient_id", "created_at" desc);`);
    this.addSql(`
      create table "alert_delivery" (
        "id" uuid not null primary key,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "channel" varchar(16) not null check ("channel" in ('email', 'webhook')),
        "target" varchar(2048) not null,
        "payload" jsonb not null,
        "test" boolean not null default false,
        "state" varchar(16) not null default 'pending' check ("state" in ('pending', 'delivered', 'failed')),
        "attempts" integer not null default 0,
        "next_attempt_at" timestamptz not null default now(),
        "locked_until" timestamptz null,
        "created_at" timestamptz not null default now(),
        "finished_at" timestamptz null,
        "last_status" integer null,
        "last_latency_ms" integer null,
        "last_response" varchar(500) null,
        "last_error" varchar(500) null,
        "history" jsonb not null default '[]'
      );
    `);
    this.addSql(`create index "alert_delivery_due_idx" on "alert_delivery" ("next_attempt_at") where "state" = 'pending';`);
    this.addSql(`create index "alert_delivery_account_idx" on "alert_delivery" ("account_id", "created_at" desc);`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "alert_delivery";`);
    this.addSql(`drop table if exists "alert_notice";`);
    this.addSql(`drop table if exists "alert_claim";`);
    this.addSql(`drop table if exists "alert_channel";`);
    this.addSql(`drop table if exists "alert_threshold";`);
  }
}

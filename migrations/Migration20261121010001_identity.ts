import { Migration } from '@mikro-orm/migrations';

/**
 * Identity (issue 3): passwords on accounts, web and device-login sessions, personal API keys, device
 * authorizations and email one-time codes. Every credential is stored as a SHA-256 hash only.
 */
export class Migration20261121010001_identity extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table "account"
        add column "password_hash" varchar(255) null,
        add column "email_verified_at" timestamptz null;
    `);
    this.addSql(`
      create table "session" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "kind" text check ("kind" in ('web', 'device')) not null,
        "token_hash" char(64) not null,
        "client_name" varchar(100) null,
        "user_agent" varchar(512) null,
        "ip" varchar(64) null,
        "last_used_at" timestamptz not null,
        "expires_at" timestamptz not null,
        "revoked_at" timestamptz null,
        constraint "session_token_hash_unique" unique ("token_hash")
      );
    `);
    this.addSql(`create index "session_account_id_index" on "session" ("account_id");`);
    this.addSql(`
      create table "api_key" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "kind" text check ("kind" in ('personal', 'enterprise')) not null default 'personal',
        "name" varchar(100) not null,
        "token_hash" char(64) not null,
        "prefix" varchar(16) not null,
        "last4" varchar(4) not null,
        "last_used_at" timestamptz null,
        "revoked_at" timestamptz null,
        constraint "api_key_token_hash_unique" unique ("token_hash")
      );
    `);
    this.addSql(`create index "api_key_account_id_index" on "api_key" ("account_id");`);
    this.addSql(`
      create table "device_authorization" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "device_code_hash" char(64) not null,
        "user_code" char(8) not null,
        "client_name" varchar(100) not null,
        "status" text check ("status" in ('pending', 'approved', 'denied', 'consumed')) not null default 'pending',
        "interval_seconds" int not null,
        "expires_at" timestamptz not null,
        "last_polled_at" timestamptz null,
        "owner_session_id" uuid null references "session" ("id") on delete set null,
        "account_id" uuid null references "account" ("id") on delete cascade,
        "session_id" uuid null references "session" ("id") on delete set null,
        "decided_at" timestamptz null,
        constraint "device_authorization_device_code_hash_unique" unique ("device_code_hash")
      );
    `);
    // A user code names one live authorization; collisions on insert are retried with a fresh code.
    this.addSql(`create unique index "device_authorization_pending_user_code" on "device_authorization" ("user_code") where "status" = 'pending';`);
    this.addSql(`
      create table "email_code" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "email" varchar(255) not null,
        "code_hash" char(64) not null,
        "expires_at" timestamptz not null,
        "attempts" int not null default 0,
        "consumed_at" timestamptz null
      );
    `);
    this.addSql(`create index "email_code_email_index" on "email_code" ("email");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "email_code";');
    this.addSql('drop table if exists "device_authorization";');
    this.addSql('drop table if exists "api_key";');
    this.addSql('drop table if exists "session";');
    this.addSql('alter table "account" drop column if exists "password_hash", drop column if exists "email_verified_at";');
  }
}

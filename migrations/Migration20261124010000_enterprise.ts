import { Migration } from '@mikro-orm/migrations';

/**
 * Enterprise organisations (issue 10, DESIGN §8.1): an organisation is an account of kind `organisation`
 * (its own plan package and pools); its members; applications and their timeline; organisation keys live in
 * `api_key` (kind `enterprise`) with an optional CIDR allow-list; connecting IPs per key, written in batches.
 */
export class Migration20261124010000_enterprise extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "account" add column "kind" text check ("kind" in ('person', 'organisation')) not null default 'person';`);
    this.addSql(`alter table "api_key" add column "allowed_cidrs" jsonb not null default '[]', add column "created_by" uuid null references "account" ("id") on delete set null;`);
    this.addSql(`
      create table "organisation" (
        "id" uuid not null primary key references "account" ("id") on delete cascade,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "name" varchar(200) not null,
        "name_key" varchar(200) not null,
        "application_id" uuid null,
        constraint "organisation_name_key_unique" unique ("name_key")
      );
    `);
    this.addSql(`
      create table "organisation_member" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "organisation_id" uuid not null references "organisation" ("id") on delete cascade,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "role" text check ("role" in ('owner', 'admin', 'member')) not null,
        constraint "organisation_member_unique" unique ("organisation_id", "account_id")
      );
    `);
    this.addSql(`create index "organisation_member_account_id_index" on "organisation_member" ("account_id");`);
    this.addSql(`
      create table "organisation_invitation" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "organisation_id" uuid not null references "organisation" ("id") on delete cascade,
        "email" varchar(255) not null,
        "role" text check ("role" in ('admin', 'member')) not null,
        "invited_by" uuid null references "account" ("id") on delete set null,
        "accepted_at" timestamptz null
      );
    `);
    this.addSql(`create unique index "organisation_invitation_open_unique" on "organisation_invitation" ("organisation_id", "email") where "accepted_at" is null;`);
    this.addSql(`create index "organisation_invitation_email_index" on "organisation_invitation" ("email") where "accepted_at" is null;`);
    this.addSql(`
      create table "enterprise_application" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "kind" text check ("kind" in ('commercial', 'enterprise')) not null,
        "organisation" varchar(200) not null,
        "organisation_key" varchar(200) not null,
        "contact_email" varchar(255) not null,
        "website" varchar(500) null,
        "country" char(2) not null,
        "use_case" text not null,
        "expected_monthly_tokens" bigint not null,
        "state" text check ("state" in ('pending_review', 'approved', 'rejected', 'withdrawn')) not null,
        "auto_approved" boolean not null default false,
        "organisation_id" uuid null references "organisation" ("id") on delete set null,
        "package_id" varchar(64) null,
        "decided_by" uuid null references "account" ("id") on delete set null,
        "decided_at" timestamptz null,
        "decision_note" text null
      );
    `);
    // One open application per account and per organisation name; the queue reads pending ones oldest first.
    this.addSql(`create unique index "enterprise_application_open_account" on "enterprise_application" ("account_id") where "state" = 'pending_review';`);
    this.addSql(`create unique index "enterprise_application_open_name" on "enterprise_application" ("organisation_key") where "state" = 'pending_review';`);
    this.addSql(`create index "enterprise_application_state_created" on "enterprise_application" ("state", "created_at", "id");`);
    this.addSql(`create index "enterprise_application_account_index" on "enterprise_application" ("account_id", "created_at");`);
    this.addSql(`
      create table "enterprise_application_event" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "application_id" uuid not null references "enterprise_application" ("id") on delete cascade,
        "actor_id" uuid null references "account" ("id") on delete set null,
        "actor_kind" text check ("actor_kind" in ('applicant', 'staff', 'system')) not null,
        "action" text check ("action" in ('submitted', 'approved', 'rejected', 'withdrawn')) not null,
        "note" text null
      );
    `);
    this.addSql(`create index "enterprise_application_event_application_index" on "enterprise_application_event" ("application_id", "created_at");`);
    this.addSql(`
      create table "organisation_connection" (
        "key_id" uuid not null references "api_key" ("id") on delete cascade,
        "ip" varchar(64) not null,
        "organisation_id" uuid not null references "organisation" ("id") on delete cascade,
        "first_seen_at" timestamptz not null,
        "last_seen_at" timestamptz not null,
        "request_count" bigint not null,
        primary key ("key_id", "ip")
      );
    `);
    this.addSql(`create index "organisation_connection_organisation_index" on "organisation_connection" ("organisation_id", "last_seen_at");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "organisation_connection";');
    this.addSql('drop table if exists "enterprise_application_event";');
    this.addSql('drop table if exists "enterprise_application";');
    this.addSql('drop table if exists "organisation_invitation";');
    this.addSql('drop table if exists "organisation_member";');
    this.addSql('drop table if exists "organisation";');
    this.addSql('alter table "api_key" drop column if exists "allowed_cidrs", drop column if exists "created_by";');
    this.addSql('alter table "account" drop column if exists "kind";');
  }
}

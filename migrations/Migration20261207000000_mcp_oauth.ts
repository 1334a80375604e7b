import { Migration } from '@mikro-orm/migrations';

/**
 * OAuth for MCP clients (issue 48 item 9): clients registered dynamically (RFC 7591), authorizations from
 * the consent page (one row from the authorize request to the grant it becomes, the one-time code on it), and
 * the access and refresh tokens issued from each, stored as SHA-256 only.
 */
export class Migration20261207000000_mcp_oauth extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "oauth_client" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "client_name" varchar(200) not null,
        "client_uri" varchar(500) null,
        "redirect_uris" jsonb not null,
        "software_id" varchar(200) null,
        "software_version" varchar(100) null,
        "created_ip" varchar(64) null
      );
    `);
    this.addSql(`
      create table "oauth_authorization" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "client_id" uuid not null references "oauth_client" ("id") on delete cascade,
        "redirect_uri" varchar(2000) not null,
        "client_state" varchar(1000) null,
        "scope" varchar(200) not null,
        "resource" varchar(2000) null,
        "code_challenge" varchar(128) not null,
        "status" text check ("status" in ('pending', 'approved', 'denied', 'exchanged')) not null default 'pending',
        "expires_at" timestamptz not null,
        "account_id" uuid null references "account" ("id") on delete cascade,
        "decided_session_id" uuid null references "session" ("id") on delete set null,
        "decided_at" timestamptz null,
        "code_hash" char(64) null,
        "code_expires_at" timestamptz null,
        "ip" varchar(64) null,
        "user_agent" varchar(512) null,
        "last_used_at" timestamptz null,
        "revoked_at" timestamptz null,
        constraint "oauth_authorization_code_hash_unique" unique ("code_hash")
      );
    `);
    this.addSql(`create index "oauth_authorization_account_index" on "oauth_authorization" ("account_id") where "account_id" is not null;`);
    this.addSql(`create index "oauth_authorization_pending_index" on "oauth_authorization" ("expires_at") where "status" = 'pending';`);
    this.addSql(`
      create table "oauth_token" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "authorization_id" uuid not null references "oauth_authorization" ("id") on delete cascade,
        "kind" text check ("kind" in ('access', 'refresh')) not null,
        "token_hash" char(64) not null,
        "expires_at" timestamptz not null,
        "rotated_at" timestamptz null,
        constraint "oauth_token_token_hash_unique" unique ("token_hash")
      );
    `);
    this.addSql(`create index "oauth_token_authorization_index" on "oauth_token" ("authorization_id");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "oauth_token";');
    this.addSql('drop table if exists "oauth_authorization";');
    this.addSql('drop table if exists "oauth_client";');
  }
}

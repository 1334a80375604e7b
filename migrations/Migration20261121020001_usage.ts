import { Migration } from '@mikro-orm/migrations';

/**
 * Usage: the append-only ledger (one row per chat request, unique request id) and, for embedded mode,
 * the pool counters and reservations (in Redis mode those live in Redis).
 */
export class Migration20261121020001_usage extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "usage_ledger" (
        "id" bigint generated always as identity primary key,
        "request_id" varchar(80) not null,
        "account_id" uuid not null,
        "credential_kind" varchar(32) not null,
        "credential_id" varchar(80) not null,
        "channel" varchar(16) not null,
        "model" varchar(64) not null,
        "routed_model" varchar(64) not null,
        "deployment" varchar(128) null,
        "class" varchar(16) not null check ("class" in ('fast', 'premium')),
        "stream" boolean not null,
        "input_tokens" integer not null check ("input_tokens" >= 0),
        "output_tokens" integer not null check ("output_tokens" >= 0),
        "estimated" boolean not null,
        "cost_micros" bigint not null check ("cost_micros" >= 0),
        "reserved_micros" bigint not null check ("reserved_micros" >= 0),
        "currency" char(3) not null,
        "status" varchar(24) not null check ("status" in ('ok', 'refunded', 'client_disconnected', 'upstream_failed', 'abandoned')),
        "upstream_status" integer null,
        "latency_ms" integer not null,
        "created_at" timestamptz not null default now(),
        constraint "usage_ledger_request_id_unique" unique ("request_id")
      );
    `);
    this.addSql(`create index "usage_ledger_account_created_idx" on "usage_ledger" ("account_id", "created_at");`);
    // Append-only: the ledger is evidence; corrections are new rows, never edits.
    this.addSql(`
      create function "usage_ledger_append_only"() returns trigger language plpgsql as $$
      begin
        raise exception 'usage_ledger is append-only';
      end;
      $$;
    `);
    this.addSql(`
      create trigger "usage_ledger_no_update" before update or delete on "usage_ledger"
      for each row execute function "usage_ledger_append_only"();
    `);
    this.addSql(`
      create table "usage_counter" (
        "account_id" uuid not null,
        "class" varchar(16) not null,
        "window_key" varchar(16) not null,
        "used_micros" bigint not null default 0,
        primary key ("account_id", "class", "window_key")
      );
    `);
    this.addSql(`
      create table "usage_reservation" (
        "request_id" varchar(80) not null primary key,
        "account_id" uuid not null,
        "class" varchar(16) not null,
        "day_key" varchar(16) not null,
        "week_key" varchar(16) not null,
        "month_key" varchar(16) not null,
        "reserved_micros" bigint not null,
        "stream" boolean not null,
        "expires_at" timestamptz not null
      );
    `);
    this.addSql(`create index "usage_reservation_expires_idx" on "usage_reservation" ("expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "usage_reservation";');
    this.addSql('drop table if exists "usage_counter";');
    this.addSql('drop table if exists "usage_ledger";');
    this.addSql('drop function if exists "usage_ledger_append_only"() cascade;');
  }
}

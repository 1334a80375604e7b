import { Migration } from '@mikro-orm/migrations';

/**
 * The metering core (issue 9): ledger rows say who paid (an account, or an organisation) and what product
 * was metered, with its own unit (images, audio seconds, searches) beside the tokens; the turn id svc
 * generated keys the row and the client's `x-svc-request-id` is kept apart for tracing. Pools and
 * reservations are keyed by payer. Existing rows were all paid by the account that made them.
 */
export class Migration20261122000000_metering extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table "usage_ledger"
        add column "client_request_id" varchar(80) null,
        add column "payer_kind" varchar(16) not null default 'account' check ("payer_kind" in ('account', 'organisation')),
        add column "payer_id" uuid null,
        add column "product" varchar(16) not null default 'chat' check ("product" in ('chat', 'search', 'image', 'speech', 'music')),
        add column "unit" varchar(16) null check ("unit" in ('image', 'audio_second', 'search')),
        add column "unit_quantity" numeric(14, 3) null check ("unit_quantity" >= 0);
    `);
    // A schema change, not a correction: the append-only trigger stands aside for the backfill only.
    this.addSql(`alter table "usage_ledger" disable trigger "usage_ledger_no_update";`);
    this.addSql(`update "usage_ledger" set "payer_id" = "account_id";`);
    this.addSql(`alter table "usage_ledger" enable trigger "usage_ledger_no_update";`);
    this.addSql(`alter table "usage_ledger" alter column "payer_id" set not null;`);
    this.addSql(`create index "usage_ledger_payer_created_idx" on "usage_ledger" ("payer_id", "created_at");`);
    this.addSql(`alter table "usage_counter" rename column "account_id" to "payer_id";`);
    this.addSql(`alter table "usage_reservation" rename column "account_id" to "payer_id";`);
    this.addSql(`alter table "usage_reservation" add column "checkpoint" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "usage_reservation" drop column "checkpoint";`);
    this.addSql(`alter table "usage_reservation" rename column "payer_id" to "account_id";`);
    this.addSql(`alter table "usage_counter" rename column "payer_id" to "account_id";`);
    this.addSql(`drop index if exists "usage_ledger_payer_created_idx";`);
    this.addSql(`
      alter table "usage_ledger" drop column "unit_quantity", drop column "unit", drop column "product",
        drop column "payer_id", drop column "payer_kind", drop column "client_request_id";
    `);
  }
}

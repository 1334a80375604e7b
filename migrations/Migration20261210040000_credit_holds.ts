import { Migration } from '@mikro-orm/migrations';

/**
 * A turn paid from credit holds its worst case (a `spend` entry) until it settles; `credit_hold` says the
 * turn is still open, so a turn whose instance died is found by the sweeper and its unused credit returned,
 * as a pool reservation is. Whoever deletes the row (the turn's own settlement or one sweeper) gives the
 * credit back; `checkpoint` is a running stream's last checkpoint (the ledger row a crash bills).
 */
export class Migration20261210040000_credit_holds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "credit_hold" (
        "request_id" varchar(128) not null primary key,
        "account_id" uuid not null references "account" ("id") on delete cascade,
        "class" varchar(16) not null,
        "reserved_micros" bigint not null check ("reserved_micros" >= 0),
        "expires_at" timestamptz not null,
        "checkpoint" jsonb null,
        "created_at" timestamptz not null default now()
      );`);
    this.addSql(`create index "credit_hold_expires_idx" on "credit_hold" ("expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "credit_hold";`);
  }
}

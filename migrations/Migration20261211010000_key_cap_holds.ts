import { Migration } from '@mikro-orm/migrations';

/**
 * Embedded mode: a turn of a capped key paid from prepaid credit holds its worst case on the key's day and
 * month counters (`key_spend_counter`) until it settles; this row says which counters and how much, so the
 * turn's settlement, or the sweeper ending its credit hold, moves them to its cost exactly once.
 */
export class Migration20261211010000_key_cap_holds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "key_cap_hold" (
        "request_id" varchar(128) not null primary key,
        "key_id" uuid not null,
        "day_key" varchar(16) not null,
        "month_key" varchar(16) not null,
        "reserved_micros" bigint not null check ("reserved_micros" >= 0),
        "created_at" timestamptz not null default now()
      );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "key_cap_hold";`);
  }
}

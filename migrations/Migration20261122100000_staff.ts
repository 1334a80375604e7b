import { Migration } from '@mikro-orm/migrations';

/**
 * Staff (issue 9): the append-only audit log of every staff action (and, later, every payment state
 * change), and a plan package that can run out (`plan_package_until`, reverted to Free by a job).
 */
export class Migration20261122100000_staff extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "account" add column "plan_package_until" timestamptz null;`);
    // The expiry job looks only at packages that end.
    this.addSql(`create index "account_plan_package_until_index" on "account" ("plan_package_until") where "plan_package_until" is not null;`);
    this.addSql(`
      create table "audit_log" (
        "id" bigint generated always as identity primary key,
        "at" timestamptz not null default now(),
        "actor_id" uuid null,
        "action" varchar(64) not null,
        "target_type" varchar(32) not null,
        "target_id" varchar(80) not null,
        "before" jsonb null,
        "after" jsonb null,
        "reason" varchar(500) null,
        "request_id" varchar(80) null
      );
    `);
    // No foreign key on actor_id or target_id: the log outlives what it talks about.
    this.addSql(`create index "audit_log_target_index" on "audit_log" ("target_type", "target_id", "id");`);
    this.addSql(`create index "audit_log_actor_index" on "audit_log" ("actor_id", "id");`);
    this.addSql(`create index "audit_log_action_index" on "audit_log" ("action", "id");`);
    // Append-only, like the usage ledger: the log is evidence, so rows are never edited or removed.
    this.addSql(`
      create function "audit_log_append_only"() returns trigger language plpgsql as $$
      begin
        raise exception 'audit_log is append-only';
      end;
      $$;
    `);
    this.addSql(`
      create trigger "audit_log_no_update" before update or delete on "audit_log"
      for each row execute function "audit_log_append_only"();
    `);
    this.addSql(`
      create trigger "audit_log_no_truncate" before truncate on "audit_log"
      for each statement execute function "audit_log_append_only"();
    `);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "audit_log";');
    this.addSql('drop function if exists "audit_log_append_only"() cascade;');
    this.addSql('drop index if exists "account_plan_package_until_index";');
    this.addSql('alter table "account" drop column if exists "plan_package_until";');
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * A request's story (issue 49 item 7): the ledger row says how a failed request failed — the envelope's
 * `code` and `stage` — and, for an organisation key, the address it connected from. Nullable and written
 * only when there is something to say, so an ordinary row is unchanged. Support finds a request by the id
 * its client saw: svc's own (`request_id`, unique already) or the client's `x-svc-request-id`, indexed
 * only where one was sent. On a large ledger an operator may build that index first with `create index
 * concurrently` (same name): the migration then leaves it as it is, and does not hold settlement's writes.
 */
export class Migration20261208000000_request_story extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table "usage_ledger"
        add column "error_code" varchar(48) null,
        add column "error_stage" varchar(16) null,
        add column "client_ip" varchar(64) null;
    `);
    this.addSql(`create index if not exists "usage_ledger_client_request_idx" on "usage_ledger" ("client_request_id") where "client_request_id" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "usage_ledger_client_request_idx";`);
    this.addSql(`alter table "usage_ledger" drop column if exists "client_ip", drop column if exists "error_stage", drop column if exists "error_code";`);
  }
}

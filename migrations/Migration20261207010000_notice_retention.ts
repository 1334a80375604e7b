import { Migration } from '@mikro-orm/migrations';

/**
 * Notices keep their raw bytes (issue 46): a body with a NUL byte or invalid UTF-8 could not be written to a
 * text column, so the notice was lost and the provider got a 500. Unverified notices keep a digest, their
 * size and the first KiB, and are purged after `payments.unverifiedRetentionDays` (the partial index serves
 * that purge).
 */
export class Migration20261207010000_notice_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "billing_notice" alter column "body" type bytea using convert_to("body", 'UTF8');`);
    this.addSql(`alter table "billing_notice" add column "body_sha256" varchar(64) null, add column "body_bytes" int null;`);
    this.addSql(`update "billing_notice" set "body_sha256" = encode(sha256("body"), 'hex'), "body_bytes" = length("body") where "body" is not null;`);
    this.addSql(`create index "billing_notice_unverified_created_index" on "billing_notice" ("created_at") where not "verified";`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists "billing_notice_unverified_created_index";');
    this.addSql(`alter table "billing_notice" drop column "body_sha256", drop column "body_bytes";`);
    this.addSql(`alter table "billing_notice" alter column "body" type text using convert_from("body", 'UTF8');`);
  }
}

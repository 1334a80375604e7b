import { Migration } from '@mikro-orm/migrations';

/**
 * Staff search (issue 49 item 6): every lookup the one search box makes is an index range scan, so it stays
 * fast at a million accounts. Prefix matches use `text_pattern_ops`, which serves `like 'abc%'` whatever the
 * database's collation (PGlite's included); no extension is needed.
 *
 * - Email prefix: emails are stored normalised to lower case (`normaliseEmail`), so the column itself is
 *   indexed. Domain prefix (`@acme`, `acme.com`): the same on the part after the `@`, then the address, so
 *   the first ten of a big domain are read in order rather than sorted out of all of them.
 * - Organisation name prefix: on its folded form (`name_key`, what uniqueness is decided on).
 * - Key prefix (`svc_live_Ab…`): on the stored prefix; a whole key is found by its hash (unique already).
 * - Request id and order number are exact matches on unique columns; a provider's trade number is found
 *   through `(provider, provider_trade_no)` with every provider listed.
 *
 * `if not exists`: on a large database the indexes can be built beforehand with `create index concurrently`.
 */
export class Migration20261208010000_staff_search extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index if not exists "account_email_prefix_idx" on "account" ("email" text_pattern_ops);`);
    this.addSql(`create index if not exists "account_email_domain_idx" on "account" (split_part("email", '@', 2) text_pattern_ops, "email" text_pattern_ops);`);
    this.addSql(`create index if not exists "organisation_name_prefix_idx" on "organisation" ("name_key" text_pattern_ops);`);
    this.addSql(`create index if not exists "api_key_prefix_idx" on "api_key" ("prefix" text_pattern_ops);`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "api_key_prefix_idx";`);
    this.addSql(`drop index if exists "organisation_name_prefix_idx";`);
    this.addSql(`drop index if exists "account_email_domain_idx";`);
    this.addSql(`drop index if exists "account_email_prefix_idx";`);
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * The revocation outbox: every credential invalidation (a revoked key or session, a disabled account, a
 * plan change) is written here and polled by every instance, so it reaches them all even when the instance
 * that made it cannot reach Redis. Rows are pruned after two hours (longer than any credential cache).
 */
export class Migration20261122020000_revocation_outbox extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "credential_invalidation" (
        "id" bigint generated always as identity primary key,
        "token_hashes" jsonb not null default '[]',
        "account_id" uuid null,
        "created_at" timestamptz not null default now()
      );
    `);
    this.addSql(`create index "credential_invalidation_created_idx" on "credential_invalidation" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "credential_invalidation";');
  }
}

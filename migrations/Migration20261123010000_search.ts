import { Migration } from '@mikro-orm/migrations';

/**
 * Hosted search, embedded provider: documents the operator ingests (`svc search ingest`) with a stored
 * full-text vector (title weighted above body) and a GIN index, and one row per ingest run for
 * `svc search stats`. The vector is a generated column so no writer can let it drift from the text.
 */
export class Migration20261123010000_search extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "search_document" (
        "id" bigint generated always as identity primary key,
        "url" varchar(2048) not null,
        "domain" varchar(255) not null,
        "title" text not null,
        "body" text not null,
        "published_at" timestamptz null,
        "content_hash" char(64) not null,
        "size_bytes" integer not null check ("size_bytes" >= 0),
        "source" text not null,
        "created_at" timestamptz not null default now(),
        "updated_at" timestamptz not null default now(),
        -- A tsvector is at most 1 MB: index the first 500,000 characters of a body (far beyond any page).
        "search_vector" tsvector generated always as (
          setweight(to_tsvector('english'::regconfig, "title"), 'A') ||
          setweight(to_tsvector('english'::regconfig, left("body", 500000)), 'B')
        ) stored,
        constraint "search_document_url_unique" unique ("url")
      );
    `);
    this.addSql(`create index "search_document_vector_idx" on "search_document" using gin ("search_vector");`);
    this.addSql(`create index "search_document_domain_idx" on "search_document" ("domain");`);
    this.addSql(`
      create table "search_ingest_run" (
        "id" bigint generated always as identity primary key,
        "started_at" timestamptz not null,
        "finished_at" timestamptz not null,
        "added" integer not null,
        "updated" integer not null,
        "unchanged" integer not null,
        "failed" integer not null
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "search_ingest_run";');
    this.addSql('drop table if exists "search_document";');
  }
}

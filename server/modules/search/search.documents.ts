/**
 * The embedded provider's corpus: `search_document` (see Migration20261123010000_search) in plain SQL with
 * driver-bound `$n` parameters — full-text search needs `websearch_to_tsquery`, `ts_rank_cd` and
 * `ts_headline`, which an ORM entity would only hide. The same statements run on PostgreSQL and PGlite.
 */
import { createHash } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type { Database } from '../../db/orm.ts';
import { domainOf } from './search.normalise.ts';

/** The text search configuration of the stored vector; queries must use the same one. */
const textSearchConfig = 'english';
/** ts_headline reads the whole text it is given: bound it, the best fragments are near the start anyway. */
const headlineChars = 100_000;
const headlineOptions = 'StartSel="", StopSel="", MaxWords=35, MinWords=15, MaxFragments=2, FragmentDelimiter=" … "';

export interface DocumentInput {
  /** Absolute http(s) URL: the document's identity. */
  url: string;
  title: string;
  body: string;
  publishedAt: Date | null;
  /** Where it came from: a file path or the fetched URL. */
  source: string;
}

export type UpsertOutcome = 'added' | 'updated' | 'unchanged';

export interface DocumentHit {
  url: string;
  title: string;
  snippet: string;
  publishedAt: Date | null;
  /** ts_rank_cd normalised to 0–1 (rank / (rank + 1)). */
  score: number;
}

export interface IngestRunRecord {
  startedAt: Date;
  finishedAt: Date;
  added: number;
  updated: number;
  unchanged: number;
  failed: number;
}

export interface CorpusStats {
  documents: number;
  totalBytes: number;
  /** When a document last changed. */
  lastChangedAt: Date | null;
  lastRun: IngestRunRecord | null;
  topDomains: { domain: string; documents: number }[];
}

export class SearchDocuments {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async #rows<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const result = await this.#db.orm.em.getConnection().getClient().executeQuery(CompiledQuery.raw(sql, [...params]));
    return result.rows as T[];
  }

  /** Inserts or updates by URL; a document whose content hash did not change is not written at all. */
  async upsert(document: DocumentInput): Promise<UpsertOutcome> {
    const url = new URL(document.url);
    url.hash = '';
    const hash = contentHash(document);
    const [row] = await this.#rows<{ inserted: boolean }>(
      `insert into "search_document" ("url", "domain", "title", "body", "published_at", "content_hash", "size_bytes", "source")
       values ($1, $2, $3, $4, $5, $6, $7, $8)
       on conflict ("url") do update set
         "domain" = excluded."domain", "title" = excluded."title", "body" = excluded."body",
         "published_at" = excluded."published_at", "content_hash" = excluded."content_hash",
         "size_bytes" = excluded."size_bytes", "source" = excluded."source", "updated_at" = now()
       where "search_document"."content_hash" <> excluded."content_hash"
       returning (xmax = 0) as "inserted"`,
      [url.href, domainOf(url), document.title, document.body, document.publishedAt, hash, Buffer.byteLength(document.body), document.source],
    );
    if (!row) return 'unchanged';
    return row.inserted ? 'added' : 'updated';
  }

  /** The best `limit` documents for a web-search-style query (quotes, `or`, `-word`), best first. */
  async search(query: string, limit: number): Promise<DocumentHit[]> {
    const rows = await this.#rows<{ url: string; title: string; snippet: string; published_at: Date | string | null; score: number | string }>(
      `with "q" as (select websearch_to_tsquery('${textSearchConfig}', $1) as "q"),
       "top" as (
         select "d"."id", ts_rank_cd("d"."search_vector", "q"."q", 32) as "score"
         from "search_document" "d", "q"
         where "d"."search_vector" @@ "q"."q"
         order by "score" desc, "d"."id"
         limit $2
       )
       select "d"."url", "d"."title", "d"."published_at", "top"."score",
         ts_headline('${textSearchConfig}', left("d"."body", ${headlineChars}), "q"."q", '${headlineOptions}') as "snippet"
       from "top" join "search_document" "d" on "d"."id" = "top"."id", "q"
       order by "top"."score" desc, "d"."id"`,
      [query, limit],
    );
    return rows.map((row) => ({
      url: row.url,
      title: row.title,
      snippet: row.snippet,
      publishedAt: row.published_at === null ? null : new Date(row.published_at),
      score: Number(row.score),
    }));
  }

  /** False when the query has no searchable words (only stop words or punctuation): it matches nothing. */
  async hasSearchableTerms(query: string): Promise<boolean> {
    const [row] = await this.#rows<{ nodes: number }>(`select numnode(websearch_to_tsquery('${textSearchConfig}', $1)) as "nodes"`, [query]);
    return Number(row?.nodes ?? 0) > 0;
  }

  async recordRun(run: IngestRunRecord): Promise<void> {
    await this.#rows(
      `insert into "search_ingest_run" ("started_at", "finished_at", "added", "updated", "unchanged", "failed") values ($1, $2, $3, $4, $5, $6)`,
      [run.startedAt, run.finishedAt, run.added, run.updated, run.unchanged, run.failed],
    );
  }

  async stats(topDomains = 10): Promise<CorpusStats> {
    const [totals] = await this.#rows<{ documents: number | string; bytes: number | string; last_changed: Date | string | null }>(
      `select count(*) as "documents", coalesce(sum("size_bytes"), 0) as "bytes", max("updated_at") as "last_changed" from "search_document"`,
    );
    const domains = await this.#rows<{ domain: string; documents: number | string }>(
      `select "domain", count(*) as "documents" from "search_document" group by "domain" order by count(*) desc, "domain" limit $1`,
      [topDomains],
    );
    const [run] = await this.#rows<{ started_at: Date | string; finished_at: Date | string; added: number; updated: number; unchanged: number; failed: number }>(
      `select * from "search_ingest_run" order by "id" desc limit 1`,
    );
    return {
      documents: Number(totals?.documents ?? 0),
      totalBytes: Number(totals?.bytes ?? 0),
      lastChangedAt: totals?.last_changed ? new Date(totals.last_changed) : null,
      lastRun: run
        ? { startedAt: new Date(run.started_at), finishedAt: new Date(run.finished_at), added: run.added, updated: run.updated, unchanged: run.unchanged, failed: run.failed }
        : null,
      topDomains: domains.map((row) => ({ domain: row.domain, documents: Number(row.documents) })),
    };
  }
}

/** What decides "changed": the text a search sees, and the date it reports. */
function contentHash(document: DocumentInput): string {
  return createHash('sha256')
    .update(JSON.stringify([document.title, document.body, document.publishedAt?.toISOString() ?? null]))
    .digest('hex');
}

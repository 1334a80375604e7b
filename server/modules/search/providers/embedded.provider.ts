/**
 * The default provider: PostgreSQL full-text search over the documents the operator ingested with
 * `svc search ingest` (PGlite in embedded mode). A database failure is a provider failure like any other.
 */
import type { Database } from '../../../db/orm.ts';
import { SearchDocuments } from '../search.documents.ts';
import { SearchProviderError, type ProviderRequest, type RawAnswer, type SearchProvider } from '../search.provider.ts';

export class EmbeddedProvider implements SearchProvider {
  readonly name = 'embedded' as const;
  readonly #documents: SearchDocuments;

  constructor(db: Database) {
    this.#documents = new SearchDocuments(db);
  }

  async search(request: ProviderRequest): Promise<RawAnswer> {
    request.signal?.throwIfAborted();
    try {
      const hits = await this.#documents.search(request.query, request.maxResults);
      const warnings = hits.length === 0 && !(await this.#documents.hasSearchableTerms(request.query))
        ? ['The query has no searchable words (only common words or punctuation), so it matched nothing.']
        : [];
      return {
        results: hits.map((hit) => ({ ...hit, engine: 'embedded' })),
        warnings,
      };
    } catch (error) {
      throw new SearchProviderError(this.name, 'upstream_unavailable', 'The embedded search index could not be read (database error).', { cause: error });
    }
  }
}

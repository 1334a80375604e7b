/**
 * The one provider interface of hosted search. A provider turns a query into raw results in its own
 * terms; `search.normalise.ts` turns every provider's raw answer into `svc.search.v1`. A provider that
 * fails throws `SearchProviderError` (never a bare Error), already carrying its `upstream_*` code.
 */
import type { SearchProviderName } from '../../config/config.ts';
import { AppError } from '../../errors/app-error.ts';

export interface ProviderRequest {
  /** Validated and whitespace-collapsed. */
  query: string;
  maxResults: number;
  /** The caller going away; aborting rejects with the signal's reason, not a provider error. */
  signal?: AbortSignal;
}

/** One result as the provider gave it; the normaliser cleans, checks and scores it. */
export interface RawResult {
  title?: string | null;
  url?: string | null;
  /** May hold HTML (SearXNG and Brave mark matches). */
  snippet?: string | null;
  content?: string | null;
  /** ISO text, a date the provider wrote some other way, or a Date. */
  publishedAt?: string | Date | null;
  /** On the provider's own scale; null when it gives none. */
  score?: number | null;
  engine?: string | null;
}

export interface RawAnswer {
  results: RawResult[];
  answer?: string | null;
  warnings: string[];
}

export interface SearchProvider {
  readonly name: SearchProviderName;
  search(request: ProviderRequest): Promise<RawAnswer>;
}

/** How a provider failed, as the error table names it. */
export type ProviderFailureCode = 'upstream_timeout' | 'upstream_unavailable' | 'upstream_error';

/**
 * A provider failed: `upstream_timeout` (no complete answer within its timeout), `upstream_unavailable`
 * (unreachable, refused, rate-limited or overloaded: 429/502/503), `upstream_error` (any other bad
 * answer: 4xx/5xx, not JSON, wrong shape, JSON output disabled). An `AppError`, so any transport maps it
 * (stage `upstream`); `debug.upstreamHost` is the provider's name, never its URL.
 */
export class SearchProviderError extends AppError {
  override name = 'SearchProviderError';
  declare readonly code: ProviderFailureCode;
  readonly provider: SearchProviderName;
  /** The provider's HTTP status, when it answered at all. */
  readonly upstreamStatus: number | null;

  constructor(provider: SearchProviderName, code: ProviderFailureCode, message: string, options: { upstreamStatus?: number | null; cause?: unknown } = {}) {
    const upstreamStatus = options.upstreamStatus ?? null;
    super(code, message, { stage: 'upstream', debug: { upstreamStatus, upstreamHost: provider }, cause: options.cause });
    this.provider = provider;
    this.upstreamStatus = upstreamStatus;
  }
}

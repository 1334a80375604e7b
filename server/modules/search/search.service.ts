/**
 * Hosted search as a library: validate the query, answer from the short cache or the configured provider,
 * normalise to `svc.search.v1`. No billing, no transport: the metered executor (REST, MCP, the
 * `svc-2.1-search` model) calls `prepare` before it reserves quota and `search` after.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Config, SearchProviderName } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { RedisLayer } from '../../infra/redis.ts';
import { searchCacheFor, type SearchCache } from './search.cache.ts';
import { normalise } from './search.normalise.ts';
import type { SvcSearchV1 } from './search.output.ts';
import type { SearchProvider } from './search.provider.ts';
import { BraveProvider } from './providers/brave.provider.ts';
import { EmbeddedProvider } from './providers/embedded.provider.ts';
import { SearxngProvider } from './providers/searxng.provider.ts';
import { TavilyProvider } from './providers/tavily.provider.ts';

export const maxQueryChars = 400;

export interface SearchOptions {
  maxResults?: number;
  /** The caller going away: the provider call is aborted and `search` rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface SearchOutcome {
  result: SvcSearchV1;
  /** True when the answer came from the cache (the provider was not asked). */
  cacheHit: boolean;
}

/** A validated request: what `search` will send. */
export interface PreparedSearch {
  /** Whitespace collapsed to single spaces, trimmed; 1–400 characters. */
  query: string;
  /** 1 to `search.maxResults`; that maximum when the client named none. */
  maxResults: number;
}

export class SearchService {
  readonly #provider: SearchProvider;
  readonly #cache: SearchCache;
  readonly #maxResults: number;
  readonly #cacheSeconds: number;
  readonly #onCacheError: (error: unknown) => void;

  constructor(config: Config, provider: SearchProvider, cache: SearchCache, onCacheError: (error: unknown) => void = () => undefined) {
    this.#provider = provider;
    this.#cache = cache;
    this.#maxResults = config.search.maxResults;
    this.#cacheSeconds = config.search.cacheSeconds;
    this.#onCacheError = onCacheError;
  }

  get provider(): SearchProviderName {
    return this.#provider.name;
  }

  /**
   * Checks a query as a client sent it. Throws `AppError('invalid_request')` naming `query` or
   * `maxResults`. Tabs and line breaks count as spaces (a chat message may be the query); other control
   * characters are refused. A `maxResults` above the configured maximum is refused too, not lowered: the
   * client asked for something this server does not give, and should hear so.
   */
  prepare(query: unknown, maxResults?: unknown): PreparedSearch {
    if (typeof query !== 'string') throw new AppError('invalid_request', bilingual('query must be a string.', 'query 必须是字符串。'), { param: 'query' });
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(query)) {
      throw new AppError('invalid_request', bilingual('query must not contain control characters.', 'query 不得包含控制字符。'), { param: 'query' });
    }
    const text = query.replace(/\s+/g, ' ').trim();
    if (!text) throw new AppError('invalid_request', bilingual('query must not be empty.', 'query 不得为空。'), { param: 'query' });
    const length = [...text].length;
    if (length > maxQueryChars) {
      throw new AppError('invalid_request', bilingual('query is {length} characters long; at most {max} are allowed.', 'query 长 {length} 个字符，最多允许 {max} 个。', { length, max: maxQueryChars }), {
        param: 'query',
      });
    }
    if (maxResults === undefined || maxResults === null) return { query: text, maxResults: this.#maxResults };
    if (typeof maxResults !== 'number' || !Number.isInteger(maxResults) || maxResults < 1) {
      throw new AppError('invalid_request', bilingual('maxResults must be a whole number from 1 to {max}.', 'maxResults 必须是 1 到 {max} 之间的整数。', { max: this.#maxResults }), {
        param: 'maxResults',
      });
    }
    if (maxResults > this.#maxResults) {
      throw new AppError(
        'invalid_request',
        bilingual('maxResults is {asked}, above this server\'s maximum of {max}; ask for at most {max} results.', 'maxResults 为 {asked}，超过本服务器的上限 {max}；最多可请求 {max} 条结果。', {
          asked: maxResults,
          max: this.#maxResults,
        }),
        { param: 'maxResults' },
      );
    }
    return { query: text, maxResults };
  }

  async search(query: string, options: SearchOptions = {}): Promise<SearchOutcome> {
    const started = performance.now();
    const prepared = this.prepare(query, options.maxResults);
    const key = this.#cacheSeconds > 0 ? cacheKey(this.#provider.name, prepared) : null;
    const cached = key ? await this.#cache.get(key).catch((error: unknown) => (this.#onCacheError(error), null)) : null;
    let result: SvcSearchV1;
    if (cached) {
      result = JSON.parse(cached) as SvcSearchV1;
    } else {
      options.signal?.throwIfAborted();
      const raw = await this.#provider.search({ query: prepared.query, maxResults: prepared.maxResults, signal: options.signal });
      result = normalise(raw, { id: searchId(), query: prepared.query, provider: this.#provider.name, maxResults: prepared.maxResults, latencyMs: 0 });
      if (key) await this.#cache.set(key, JSON.stringify(result), this.#cacheSeconds).catch((error: unknown) => this.#onCacheError(error));
    }
    // Every answer is its own: a fresh id and this call's latency.
    result.id = searchId();
    result.latencyMs = Math.round(performance.now() - started);
    return { result, cacheHit: cached !== null };
  }
}

function searchId(): string {
  return `srch_${randomBytes(12).toString('base64url')}`;
}

function cacheKey(provider: SearchProviderName, prepared: PreparedSearch): string {
  return createHash('sha256').update(JSON.stringify([provider, prepared.maxResults, prepared.query])).digest('base64url');
}

/** The configured provider. Throws (at start) when its settings are incomplete. */
export function createSearchProvider(config: Config, db: Database): SearchProvider {
  const search = config.search;
  switch (search.provider) {
    case 'embedded':
      return new EmbeddedProvider(db);
    case 'searxng':
      return new SearxngProvider(search.searxng);
    case 'brave':
      return new BraveProvider(search.brave, config.secrets[search.brave.apiKeyEnv]);
    case 'tavily':
      return new TavilyProvider(search.tavily, config.secrets[search.tavily.apiKeyEnv]);
  }
}

/** For the composition root: the configured provider behind the Redis (or in-process) cache. */
export function createSearchService(config: Config, db: Database, redis: RedisLayer, onCacheError?: (error: unknown) => void): SearchService {
  return new SearchService(config, createSearchProvider(config, db), searchCacheFor(redis), onCacheError);
}

/**
 * Brave Search API: `GET {baseUrl}/web/search?q=…&count=…` with the subscription token in
 * `X-Subscription-Token`; results in `web.results[]` (`title`, `url`, `description` with `<strong>` marks,
 * `page_age`). Brave gives no scores: the normaliser derives them from rank.
 */
import type { SearchConfig } from '../../../config/config.ts';
import { SearchProviderError, type ProviderRequest, type RawAnswer, type RawResult, type SearchProvider } from '../search.provider.ts';
import { callProvider, parseJson, statusFailure } from './provider-http.ts';

const label = 'Brave Search';
/** Brave's largest `count`. */
const maxCount = 20;

interface BraveResult {
  title?: unknown;
  url?: unknown;
  description?: unknown;
  page_age?: unknown;
  extra_snippets?: unknown;
}

export class BraveProvider implements SearchProvider {
  readonly name = 'brave' as const;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #apiKey: string;

  constructor(config: SearchConfig['brave'], apiKey: string | undefined) {
    if (!apiKey) throw new Error(`the environment variable ${config.apiKeyEnv} (search.brave.apiKeyEnv) is not set`);
    this.#baseUrl = config.baseUrl.replace(/\/+$/, '');
    this.#timeoutMs = config.timeoutMs;
    this.#apiKey = apiKey;
  }

  async search(request: ProviderRequest): Promise<RawAnswer> {
    const params = new URLSearchParams({ q: request.query, count: String(Math.min(request.maxResults, maxCount)) });
    const call = {
      provider: this.name,
      label,
      url: `${this.#baseUrl}/web/search?${params}`,
      headers: { 'x-subscription-token': this.#apiKey },
      timeoutMs: this.#timeoutMs,
      signal: request.signal,
    };
    const reply = await callProvider(call);
    if (reply.status < 200 || reply.status > 299) throw statusFailure(call, reply);
    const body = parseJson(call, reply) as { web?: { results?: unknown } } | null;
    if (typeof body !== 'object' || body === null) {
      throw new SearchProviderError(this.name, 'upstream_error', 'Brave Search answered JSON that is not an object.', { upstreamStatus: reply.status });
    }
    // No `web` section is how Brave says "no web results".
    const results = body.web?.results ?? [];
    if (!Array.isArray(results)) {
      throw new SearchProviderError(this.name, 'upstream_error', 'Brave Search answered with `web.results` that is not a list.', { upstreamStatus: reply.status });
    }
    return { results: (results as BraveResult[]).map(toRaw), warnings: [] };
  }
}

function toRaw(result: BraveResult): RawResult {
  if (typeof result !== 'object' || result === null) return {};
  const extra = Array.isArray(result.extra_snippets) ? result.extra_snippets.filter((snippet) => typeof snippet === 'string') : [];
  return {
    title: typeof result.title === 'string' ? result.title : null,
    url: typeof result.url === 'string' ? result.url : null,
    snippet: typeof result.description === 'string' ? result.description : null,
    content: extra.length > 0 ? extra.join('\n') : null,
    publishedAt: typeof result.page_age === 'string' ? result.page_age : null,
    score: null,
    engine: 'brave',
  };
}

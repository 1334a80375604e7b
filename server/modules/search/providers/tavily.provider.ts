/**
 * Tavily: `POST {baseUrl}/search` with `Authorization: Bearer <key>` and a JSON body `{query,
 * max_results, search_depth, include_answer}`; results `[{title, url, content, score (0–1),
 * published_date?, raw_content?}]` and an optional `answer`.
 */
import type { SearchConfig } from '../../../config/config.ts';
import { SearchProviderError, type ProviderRequest, type RawAnswer, type RawResult, type SearchProvider } from '../search.provider.ts';
import { callProvider, parseJson, statusFailure } from './provider-http.ts';

const label = 'Tavily';
/** Tavily's largest `max_results`. */
const maxCount = 20;

interface TavilyResult {
  title?: unknown;
  url?: unknown;
  content?: unknown;
  raw_content?: unknown;
  score?: unknown;
  published_date?: unknown;
}

export class TavilyProvider implements SearchProvider {
  readonly name = 'tavily' as const;
  readonly #config: SearchConfig['tavily'];
  readonly #baseUrl: string;
  readonly #apiKey: string;

  constructor(config: SearchConfig['tavily'], apiKey: string | undefined) {
    if (!apiKey) throw new Error(`the environment variable ${config.apiKeyEnv} (search.tavily.apiKeyEnv) is not set`);
    this.#config = config;
    this.#baseUrl = config.baseUrl.replace(/\/+$/, '');
    this.#apiKey = apiKey;
  }

  async search(request: ProviderRequest): Promise<RawAnswer> {
    const call = {
      provider: this.name,
      label,
      url: `${this.#baseUrl}/search`,
      method: 'POST' as const,
      headers: { authorization: `Bearer ${this.#apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: request.query,
        max_results: Math.min(request.maxResults, maxCount),
        search_depth: this.#config.searchDepth,
        include_answer: this.#config.includeAnswer,
      }),
      timeoutMs: this.#config.timeoutMs,
      signal: request.signal,
    };
    const reply = await callProvider(call);
    if (reply.status < 200 || reply.status > 299) throw statusFailure(call, reply);
    const body = parseJson(call, reply) as { results?: unknown; answer?: unknown } | null;
    if (typeof body !== 'object' || body === null || !Array.isArray(body.results)) {
      throw new SearchProviderError(this.name, 'upstream_error', 'Tavily answered JSON without a `results` list.', { upstreamStatus: reply.status });
    }
    return {
      results: (body.results as TavilyResult[]).map(toRaw),
      answer: typeof body.answer === 'string' ? body.answer : null,
      warnings: [],
    };
  }
}

function toRaw(result: TavilyResult): RawResult {
  if (typeof result !== 'object' || result === null) return {};
  return {
    title: typeof result.title === 'string' ? result.title : null,
    url: typeof result.url === 'string' ? result.url : null,
    snippet: typeof result.content === 'string' ? result.content : null,
    content: typeof result.raw_content === 'string' ? result.raw_content : null,
    publishedAt: typeof result.published_date === 'string' ? result.published_date : null,
    score: typeof result.score === 'number' ? result.score : null,
    engine: 'tavily',
  };
}

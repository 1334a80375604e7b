/**
 * SearXNG's JSON API (CONFORMANCE "SearXNG JSON"): `GET {url}/search?q=…&format=json`. JSON output is off
 * by default in SearXNG; such an instance answers 403, which we report as exactly that.
 */
import type { SearchConfig } from '../../../config/config.ts';
import { SearchProviderError, type ProviderRequest, type RawAnswer, type RawResult, type SearchProvider } from '../search.provider.ts';
import { callProvider, parseJson, statusFailure } from './provider-http.ts';

const label = 'SearXNG';

interface SearxngResult {
  url?: unknown;
  title?: unknown;
  content?: unknown;
  engine?: unknown;
  engines?: unknown;
  score?: unknown;
  publishedDate?: unknown;
}

export class SearxngProvider implements SearchProvider {
  readonly name = 'searxng' as const;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;

  constructor(config: SearchConfig['searxng']) {
    if (!config.url) throw new Error('search.searxng.url is required for the searxng provider');
    this.#baseUrl = config.url.replace(/\/+$/, '');
    this.#timeoutMs = config.timeoutMs;
  }

  async search(request: ProviderRequest): Promise<RawAnswer> {
    const url = `${this.#baseUrl}/search?${new URLSearchParams({ q: request.query, format: 'json' })}`;
    const call = { provider: this.name, label, url, timeoutMs: this.#timeoutMs, signal: request.signal };
    const reply = await callProvider(call);
    if (reply.status === 403) {
      throw new SearchProviderError(this.name, 'upstream_error', 'SearXNG refused JSON output (HTTP 403): add `json` to `search.formats` in the instance\'s settings.yml.', {
        upstreamStatus: 403,
      });
    }
    if (reply.status < 200 || reply.status > 299) throw statusFailure(call, reply);
    const body = parseJson(call, reply) as { results?: unknown; answers?: unknown; unresponsive_engines?: unknown };
    if (typeof body !== 'object' || body === null || !Array.isArray(body.results)) {
      throw new SearchProviderError(this.name, 'upstream_error', 'SearXNG answered JSON without a `results` list.', { upstreamStatus: reply.status });
    }
    return {
      results: (body.results as SearxngResult[]).map(toRaw),
      answer: firstAnswer(body.answers),
      warnings: unresponsive(body.unresponsive_engines),
    };
  }
}

function toRaw(result: SearxngResult): RawResult {
  if (typeof result !== 'object' || result === null) return {};
  const engines = Array.isArray(result.engines) ? result.engines.filter((engine): engine is string => typeof engine === 'string') : [];
  return {
    url: text(result.url),
    title: text(result.title),
    snippet: text(result.content),
    publishedAt: text(result.publishedDate),
    score: typeof result.score === 'number' ? result.score : null,
    engine: text(result.engine) || engines[0] || 'searxng',
  };
}

/** Older SearXNG sends answers as strings, newer as objects with an `answer` field. */
function firstAnswer(answers: unknown): string | null {
  if (!Array.isArray(answers)) return null;
  for (const answer of answers) {
    if (typeof answer === 'string' && answer.trim()) return answer;
    const inner = (answer as { answer?: unknown } | null)?.answer;
    if (typeof inner === 'string' && inner.trim()) return inner;
  }
  return null;
}

/** `unresponsive_engines: [[engine, reason], …]`: the search still answered, without those engines. */
function unresponsive(engines: unknown): string[] {
  if (!Array.isArray(engines)) return [];
  return engines.flatMap((entry) => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string') return [];
    const reason = typeof entry[1] === 'string' && entry[1] ? `: ${entry[1]}` : '';
    return [`SearXNG engine ${entry[0]} did not respond${reason}`];
  });
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

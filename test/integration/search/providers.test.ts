/**
 * The HTTP providers against local servers in their public shapes (SearXNG, Brave, Tavily): what each
 * sends, the normalised svc.search.v1 it yields (checked against the JSON Schema), and every failure as
 * a typed SearchProviderError with the right upstream_* code — never the provider's URL in a message.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { BraveProvider } from '../../../server/modules/search/providers/brave.provider.ts';
import { SearxngProvider } from '../../../server/modules/search/providers/searxng.provider.ts';
import { TavilyProvider } from '../../../server/modules/search/providers/tavily.provider.ts';
import { MemorySearchCache } from '../../../server/modules/search/search.cache.ts';
import { SearchProviderError } from '../../../server/modules/search/search.provider.ts';
import { SearchService } from '../../../server/modules/search/search.service.ts';
import { startScriptedBrave, startScriptedTavily, type ScriptedApi } from '../../fixtures/scripted-search-apis.ts';
import { startScriptedSearxng, type ScriptedSearxng } from '../../fixtures/scripted-searxng.ts';
import { assertSvcSearchV1 } from '../../helpers/search-schema.ts';

let searxng: ScriptedSearxng;
let brave: ScriptedApi;
let tavily: ScriptedApi;

beforeAll(async () => {
  [searxng, brave, tavily] = await Promise.all([startScriptedSearxng(), startScriptedBrave('brave-key'), startScriptedTavily('tvly-key')]);
});

afterAll(async () => {
  await Promise.all([searxng?.close(), brave?.close(), tavily?.close()]);
});

/** A service without a cache, so every call reaches the provider. */
function searxngService(searxngConfig: Record<string, unknown> = {}) {
  const config = parseConfig({ search: { provider: 'searxng', cacheSeconds: 0, searxng: { url: searxng.url, ...searxngConfig } } });
  return new SearchService(config, new SearxngProvider(config.search.searxng), new MemorySearchCache());
}

async function failure(promise: Promise<unknown>): Promise<SearchProviderError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(SearchProviderError);
  return error as SearchProviderError;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('searxng provider', () => {
  beforeEach(() => {
    searxng.mode = 'ok';
    searxng.requests.length = 0;
  });

  it('asks GET /search?q=…&format=json and normalises the answer', async () => {
    const { result, cacheHit } = await searxngService().search('  rust   async\nruntime ');
    assertSvcSearchV1(result);
    expect(cacheHit).toBe(false);
    expect(searxng.requests).toHaveLength(1);
    expect(Object.fromEntries(searxng.requests[0]!)).toEqual({ q: 'rust async runtime', format: 'json' });
    expect(result).toMatchObject({ object: 'svc.search.v1', query: 'rust async runtime', provider: 'searxng', answer: 'The answer to rust async runtime' });
    expect(result.id).toMatch(/^srch_[A-Za-z0-9_-]{16}$/);
    expect(result.results).toEqual([
      {
        rank: 1,
        title: 'Alpha result for rust async runtime',
        url: 'https://www.example.org/alpha',
        domain: 'example.org',
        snippet: 'About the query & more over two lines',
        publishedAt: '2024-01-15T08:30:00.000Z',
        score: 1,
        engine: 'google',
      },
      { rank: 2, title: 'Beta news', url: 'https://news.example.com/beta?x=1&y=2', domain: 'news.example.com', snippet: 'Beta snippet', publishedAt: '2023-11-30T23:00:00.000Z', score: 0.25, engine: 'bing' },
      { rank: 3, title: 'Gamma', url: 'https://example.net/gamma', domain: 'example.net', snippet: '', publishedAt: null, score: 0.05, engine: 'duckduckgo' },
      { rank: 4, title: 'example.com/epsilon', url: 'https://example.com/epsilon', domain: 'example.com', snippet: 'Epsilon <tag> text', publishedAt: null, score: 0.02, engine: 'wikipedia' },
    ]);
    expect(result.warnings).toEqual([
      'SearXNG engine wikidata did not respond: timeout',
      'SearXNG engine qwant did not respond: CAPTCHA',
      'Dropped result 3 ("Relative link"): "/relative/path" is not an absolute URL.',
      'Dropped result 4 ("Script link"): "javascript:alert(1)" is not an http(s) URL.',
      'Dropped result 6 ("FTP file"): "ftp://files.example.com/delta" is not an http(s) URL.',
    ]);
  });

  it('applies maxResults; one above the configured maximum is refused naming the maximum, not lowered', async () => {
    expect((await searxngService().search('q', { maxResults: 2 })).result.results.map((r) => r.rank)).toEqual([1, 2]);
    const config = parseConfig({ search: { provider: 'searxng', maxResults: 3, cacheSeconds: 0, searxng: { url: searxng.url } } });
    const limited = new SearchService(config, new SearxngProvider(config.search.searxng), new MemorySearchCache());
    const asked = searxng.requests.length;
    await expect(limited.search('q', { maxResults: 40 })).rejects.toMatchObject({
      code: 'invalid_request',
      message: "maxResults is 40, above this server's maximum of 3; ask for at most 3 results.",
      messageZh: 'maxResults 为 40，超过本服务器的上限 3；最多可请求 3 条结果。',
      options: { param: 'maxResults' },
    });
    expect(searxng.requests.length).toBe(asked);
    const { result } = await limited.search('q', { maxResults: 3 });
    assertSvcSearchV1(result);
    expect(result.results).toHaveLength(3);
    expect((await limited.search('q')).result.results).toHaveLength(3);
  });

  it('an empty answer is a valid svc.search.v1 with no results', async () => {
    searxng.mode = 'empty';
    const { result } = await searxngService().search('nothing');
    assertSvcSearchV1(result);
    expect(result.results).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result).not.toHaveProperty('answer');
  });

  it('403 means JSON output is disabled on the instance, and says how to enable it', async () => {
    searxng.mode = 'forbidden';
    const error = await failure(searxngService().search('q'));
    expect(error.code).toBe('upstream_error');
    expect(error.status).toBe(502);
    expect(error.upstreamStatus).toBe(403);
    expect(error.message).toBe("SearXNG refused JSON output (HTTP 403): add `json` to `search.formats` in the instance's settings.yml.");
  });

  it('500, an HTML body and JSON without results are upstream_error', async () => {
    searxng.mode = 'error';
    const error = await failure(searxngService().search('q'));
    expect([error.code, error.upstreamStatus, error.message]).toEqual(['upstream_error', 500, 'SearXNG answered HTTP 500.']);
    searxng.mode = 'not-json';
    expect((await failure(searxngService().search('q'))).message).toBe('SearXNG answered with a body that is not JSON.');
    searxng.mode = 'bad-shape';
    expect((await failure(searxngService().search('q'))).message).toBe('SearXNG answered JSON without a `results` list.');
  });

  it('a slow instance is upstream_timeout after search.searxng.timeoutMs', async () => {
    searxng.mode = 'slow';
    searxng.delayMs = 3000;
    const started = performance.now();
    const error = await failure(searxngService({ timeoutMs: 300 }).search('q'));
    expect(performance.now() - started).toBeLessThan(2000);
    expect([error.code, error.status, error.message]).toEqual(['upstream_timeout', 504, 'SearXNG did not answer within 300 ms.']);
    expect(error.options).toMatchObject({ stage: 'upstream', debug: { upstreamHost: 'searxng', upstreamStatus: null } });
  });

  it('an unreachable instance is upstream_unavailable; no message names its URL', async () => {
    const port = await closedPort();
    const config = parseConfig({ search: { provider: 'searxng', cacheSeconds: 0, searxng: { url: `http://127.0.0.1:${port}` } } });
    const service = new SearchService(config, new SearxngProvider(config.search.searxng), new MemorySearchCache());
    const error = await failure(service.search('q'));
    expect([error.code, error.status, error.message]).toEqual(['upstream_unavailable', 503, 'SearXNG is unreachable (ECONNREFUSED).']);
    for (const mode of ['forbidden', 'error', 'slow'] as const) {
      searxng.mode = mode;
      const message = (await failure(searxngService({ timeoutMs: 200 }).search('q'))).message;
      expect(message).not.toContain('127.0.0.1');
    }
  });

  it('a caller that goes away aborts the call with its own reason, not a provider error', async () => {
    searxng.mode = 'slow';
    searxng.delayMs = 3000;
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('client went away')), 100);
    await expect(searxngService().search('q', { signal: controller.signal })).rejects.toThrow('client went away');
  });

  it('rejects bad queries with invalid_request naming the field, before asking the provider', async () => {
    const service = searxngService();
    for (const [query, message] of [
      ['', 'query must not be empty.'],
      [' \n\t ', 'query must not be empty.'],
      ['x'.repeat(401), 'query is 401 characters long; at most 400 are allowed.'],
      ['bell\u0007', 'query must not contain control characters.'],
      ['nul\u0000', 'query must not contain control characters.'],
      [42, 'query must be a string.'],
    ] as const) {
      const error = (await service.search(query as string).catch((reason: unknown) => reason)) as { code: string; message: string; options: { param: string } };
      expect([error.code, error.message, error.options.param]).toEqual(['invalid_request', message, 'query']);
    }
    expect(() => service.prepare('ok', 0)).toThrow('maxResults must be a whole number from 1 to 10.');
    expect(() => service.prepare('ok', 2.5)).toThrow(expect.objectContaining({ code: 'invalid_request', options: expect.objectContaining({ param: 'maxResults' }) }));
    expect(service.prepare('😀'.repeat(400)).query).toHaveLength(800); // 400 characters, 800 UTF-16 units
    expect(searxng.requests).toHaveLength(0);
  });
});

describe('brave provider', () => {
  function braveService(apiKey = 'brave-key', maxResults = 10) {
    const config = parseConfig({ search: { provider: 'brave', maxResults, cacheSeconds: 0, brave: { baseUrl: brave.url, apiKeyEnv: 'TEST_BRAVE_KEY' } } }, { TEST_BRAVE_KEY: apiKey });
    return new SearchService(config, new BraveProvider(config.search.brave, config.secrets.TEST_BRAVE_KEY), new MemorySearchCache());
  }

  beforeEach(() => {
    brave.status = null;
    brave.requests.length = 0;
  });

  it('sends the key in X-Subscription-Token and count, and normalises web.results', async () => {
    const { result } = await braveService().search('brave query', { maxResults: 4 });
    assertSvcSearchV1(result);
    const request = brave.requests[0]!;
    expect(request.path).toBe('/web/search');
    expect(request.headers['x-subscription-token']).toBe('brave-key');
    expect(Object.fromEntries(request.query)).toEqual({ q: 'brave query', count: '4' });
    expect(result.provider).toBe('brave');
    expect(result.results).toEqual([
      {
        rank: 1,
        title: 'Brave first for brave query',
        url: 'https://www.brave-example.com/one',
        domain: 'brave-example.com',
        snippet: "The first result's description.",
        content: 'More text from the page.\nAnd more.',
        publishedAt: '2024-02-10T12:00:00.000Z',
        score: 1,
        engine: 'brave',
      },
      { rank: 2, title: 'Second', url: 'https://two.example.com/path', domain: 'two.example.com', snippet: 'Second description', publishedAt: null, score: 0.5, engine: 'brave' },
      { rank: 3, title: 'Third', url: 'http://three.example.com/', domain: 'three.example.com', snippet: '', publishedAt: null, score: 0.25, engine: 'brave' },
    ]);
    expect(result.warnings).toEqual(['Dropped result 3 ("Broken"): "not a url" is not an absolute URL.']);
  });

  it('asks for at most 20 (Brave\'s limit)', async () => {
    await braveService('brave-key', 50).search('q', { maxResults: 50 });
    expect(brave.requests[0]!.query.get('count')).toBe('20');
  });

  it('a refused key, rate limiting and overload map to upstream codes', async () => {
    const refused = await failure(braveService('wrong').search('q'));
    expect([refused.code, refused.upstreamStatus, refused.message]).toEqual(['upstream_error', 401, "Brave Search refused svc's API key (HTTP 401): The provided subscription token is invalid."]);
    for (const [status, code] of [[429, 'upstream_unavailable'], [503, 'upstream_unavailable'], [504, 'upstream_timeout'], [500, 'upstream_error'], [422, 'upstream_error']] as const) {
      brave.status = status;
      const error = await failure(braveService().search('q'));
      expect([error.code, error.upstreamStatus]).toEqual([code, status]);
    }
    brave.status = 429;
    expect((await failure(braveService().search('q'))).message).toBe('Brave Search is rate-limiting svc (HTTP 429): scripted status 429');
  });

  it('a missing key stops the start with the variable named', () => {
    expect(() => parseConfig({ search: { provider: 'brave', brave: { apiKeyEnv: 'TEST_BRAVE_KEY' } } }, {})).toThrow(
      'invalid config at search.brave.apiKeyEnv: the environment variable TEST_BRAVE_KEY is not set',
    );
  });
});

describe('tavily provider', () => {
  function tavilyService(options: { apiKey?: string; includeAnswer?: boolean } = {}) {
    const config = parseConfig(
      { search: { provider: 'tavily', cacheSeconds: 0, tavily: { baseUrl: `${tavily.url}/`, includeAnswer: options.includeAnswer ?? false } } },
      { TAVILY_API_KEY: options.apiKey ?? 'tvly-key' },
    );
    return new SearchService(config, new TavilyProvider(config.search.tavily, config.secrets.TAVILY_API_KEY), new MemorySearchCache());
  }

  beforeEach(() => {
    tavily.status = null;
    tavily.requests.length = 0;
  });

  it('POSTs the query with a Bearer key and normalises results, scores and dates', async () => {
    const { result } = await tavilyService({ includeAnswer: true }).search('tavily query', { maxResults: 5 });
    assertSvcSearchV1(result);
    const request = tavily.requests[0]!;
    expect(request.path).toBe('/search');
    expect(request.headers.authorization).toBe('Bearer tvly-key');
    expect(request.body).toEqual({ query: 'tavily query', max_results: 5, search_depth: 'basic', include_answer: true });
    expect(result.answer).toBe('Tavily says: tavily query');
    expect(result.results).toEqual([
      { rank: 1, title: 'Tavily first for tavily query', url: 'https://tavily-example.com/a', domain: 'tavily-example.com', snippet: 'First content', publishedAt: null, score: 0.91, engine: 'tavily' },
      { rank: 2, title: 'Tavily second', url: 'https://b.tavily-example.com/b', domain: 'b.tavily-example.com', snippet: 'Second content', publishedAt: '2024-01-15T10:00:00.000Z', score: 0.42, engine: 'tavily' },
    ]);
    expect(result.warnings).toEqual(['Dropped result 3 ("Tavily third"): "mailto:someone@example.com" is not an http(s) URL.']);
  });

  it('without includeAnswer there is no answer field', async () => {
    const { result } = await tavilyService().search('q');
    expect(result).not.toHaveProperty('answer');
  });

  it('a refused key is upstream_error with Tavily\'s reason', async () => {
    const error = await failure(tavilyService({ apiKey: 'wrong' }).search('q'));
    expect([error.code, error.upstreamStatus, error.message]).toEqual(['upstream_error', 401, "Tavily refused svc's API key (HTTP 401): Unauthorized: missing or invalid API key."]);
  });
});

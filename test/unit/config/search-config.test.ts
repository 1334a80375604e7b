import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../server/config/config.ts';

describe('search config', () => {
  it('defaults: the embedded provider, 10 results, a 60 s cache', () => {
    const { search } = parseConfig({});
    expect(search).toEqual({
      provider: 'embedded',
      maxResults: 10,
      cacheSeconds: 60,
      searxng: { timeoutMs: 5000 },
      brave: { apiKeyEnv: 'BRAVE_API_KEY', baseUrl: 'https://api.search.brave.com/res/v1', timeoutMs: 5000 },
      tavily: { apiKeyEnv: 'TAVILY_API_KEY', baseUrl: 'https://api.tavily.com', timeoutMs: 10_000, searchDepth: 'basic', includeAnswer: false },
      ingest: { allowHttpHosts: [], allowPrivateHosts: [] },
    });
  });

  it('search.ingest lists hosts by name or IP literal', () => {
    const { search } = parseConfig({ search: { ingest: { allowHttpHosts: ['docs.intranet', '10.0.0.5'], allowPrivateHosts: ['fd00::5', '[fd00::6]', 'wiki.corp.'] } } });
    expect(search.ingest).toEqual({ allowHttpHosts: ['docs.intranet', '10.0.0.5'], allowPrivateHosts: ['fd00::5', '[fd00::6]', 'wiki.corp.'] });
  });

  it('SVC_SEARCH_URL selects SearXNG at that URL, over the file', () => {
    const config = parseConfig({ search: { provider: 'embedded', searxng: { url: 'http://elsewhere:1', timeoutMs: 900 } } }, { SVC_SEARCH_URL: 'http://127.0.0.1:8888/' });
    expect(config.search.provider).toBe('searxng');
    expect(config.search.searxng).toEqual({ url: 'http://127.0.0.1:8888', timeoutMs: 900 });
  });

  it('an API provider reads its key from the named variable', () => {
    const config = parseConfig({ search: { provider: 'tavily', tavily: { apiKeyEnv: 'MY_TAVILY' } } }, { MY_TAVILY: 'tvly-1' });
    expect(config.secrets.MY_TAVILY).toBe('tvly-1');
  });

  it.each([
    [{ search: { provider: 'google' } }, {}, 'search.provider'],
    [{ search: { provider: 'searxng' } }, {}, 'invalid config at search.searxng.url: required when search.provider is searxng (or set SVC_SEARCH_URL)'],
    [{ search: { searxng: { url: 'ftp://x' } } }, {}, 'invalid config at search.searxng.url: expected an http(s) URL'],
    [{ search: { maxResults: 51 } }, {}, 'search.maxResults'],
    [{ search: { maxResults: 0 } }, {}, 'search.maxResults'],
    [{ search: { cacheSeconds: -1 } }, {}, 'search.cacheSeconds'],
    [{ search: { brave: { timeoutMs: 0 } } }, {}, 'search.brave.timeoutMs'],
    [{ search: { tavily: { searchDepth: 'deep' } } }, {}, 'search.tavily.searchDepth'],
    [{ search: { bing: {} } }, {}, 'unknown key search.bing'],
    [{ search: { ingest: { allowHttpHosts: ['http://docs.intranet'] } } }, {}, 'invalid config at search.ingest.allowHttpHosts.0: expected a host name or IP literal'],
    [{ search: { ingest: { allowPrivateHosts: ['wiki.corp:8080'] } } }, {}, 'invalid config at search.ingest.allowPrivateHosts.0: expected a host name or IP literal'],
    [{ search: { ingest: { allowPrivateRanges: [] } } }, {}, 'unknown key search.ingest.allowPrivateRanges'],
    [{ search: { provider: 'brave' } }, {}, 'invalid config at search.brave.apiKeyEnv: the environment variable BRAVE_API_KEY is not set'],
    [{}, { SVC_SEARCH_URL: 'not a url' }, 'invalid config at SVC_SEARCH_URL: expected an http(s) URL of a SearXNG instance, got "not a url"'],
  ])('%j with %j fails naming the key', (input, env, message) => {
    expect(() => parseConfig(input, env)).toThrow(ConfigError);
    expect(() => parseConfig(input, env)).toThrow(message);
  });
});

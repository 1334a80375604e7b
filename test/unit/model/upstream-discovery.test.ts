/**
 * Which local model server a newcomer's svc uses, and under which model name (issue 49 item 1): discovery is
 * on outside production and off in production unless asked for; product ids the server lists keep their
 * name, the others go as its first listed model; a server listing nothing gets the product ids.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { upstreamFor } from '../../../server/modules/model/upstream-discovery.ts';

describe('upstreamDiscovery', () => {
  it('is on by default outside production, off in production unless enabled explicitly', () => {
    expect(parseConfig({}).upstreamDiscovery).toEqual({ enabled: true, ports: [11434, 1234, 8000, 8080], timeoutMs: 500 });
    expect(parseConfig({}, { NODE_ENV: 'production' }).upstreamDiscovery.enabled).toBe(false);
    expect(parseConfig({ upstreamDiscovery: { enabled: true } }, { NODE_ENV: 'production' }).upstreamDiscovery.enabled).toBe(true);
    expect(parseConfig({ upstreamDiscovery: { enabled: false } }).upstreamDiscovery.enabled).toBe(false);
  });

  it('product ids the server serves keep their name; the rest go as its first listed model', () => {
    const found = { baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3.2:latest', 'svc-2.1', 'qwen2.5:7b'] };
    expect(upstreamFor(found, ['auto', 'svc-2.1-fast', 'svc-2.1'])).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      modelNames: { auto: 'llama3.2:latest', 'svc-2.1-fast': 'llama3.2:latest' },
      source: 'discovered',
    });
    expect(upstreamFor({ baseUrl: 'http://127.0.0.1:8000/v1', models: [] }, ['svc-2.1']).modelNames).toEqual({});
  });

  it('SVC_UPSTREAM_MODEL names the upstream model for every product model, and needs SVC_UPSTREAM_URL', () => {
    const config = parseConfig({}, { SVC_UPSTREAM_URL: 'http://127.0.0.1:11434/v1', SVC_UPSTREAM_MODEL: 'llama3.2' });
    expect(config.defaultUpstream?.modelNames['svc-2.1-pro']).toBe('llama3.2');
    expect(Object.keys(config.defaultUpstream?.modelNames ?? {})).toHaveLength(11);
    expect(() => parseConfig({}, { SVC_UPSTREAM_MODEL: 'llama3.2' })).toThrow('invalid config at SVC_UPSTREAM_MODEL');
  });
});

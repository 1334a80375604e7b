/**
 * `GET /v1/schemas/svc.search.v1.json`: public, the draft 2020-12 schema with this server's `$id`,
 * accepted by ajv as a schema and strict enough to reject what svc.search.v1 rules out.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalise } from '../../../server/modules/search/search.normalise.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { searxngAnswer } from '../../fixtures/scripted-searxng.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let server: TestApp;

beforeAll(async () => {
  setup = await realMode();
  server = await startApp(setup.config, { config: { server: { baseUrl: 'https://svc.example.com' } } });
});

afterAll(async () => {
  await server?.close();
  await setup?.cleanup();
});

describe('GET /v1/schemas/svc.search.v1.json', () => {
  it('is public and serves the JSON Schema with this server\'s $id', async () => {
    for (const headers of [{}, { authorization: 'Bearer svc_live_not_a_real_key' }] as Record<string, string>[]) {
      const response = await fetch(`${server.url}/v1/schemas/svc.search.v1.json`, { headers });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/schema+json; charset=utf-8');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      const schema = (await response.json()) as Record<string, any>;
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.$id).toBe('https://svc.example.com/v1/schemas/svc.search.v1.json');
      expect(schema.title).toBe('svc.search.v1');
      expect(schema.required).toEqual(['object', 'id', 'query', 'provider', 'results', 'warnings', 'latencyMs']);
      expect(schema.properties.results.items.required).toEqual(['rank', 'title', 'url', 'domain', 'snippet', 'publishedAt', 'score', 'engine']);
    }
  });

  it('validates real output and rejects what svc.search.v1 rules out', async () => {
    const schema = await (await fetch(`${server.url}/v1/schemas/svc.search.v1.json`)).json();
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    formatsPlugin.default(ajv);
    expect(ajv.validateSchema(schema)).toBe(true);
    const validate = ajv.compile(schema);
    const output = normalise(
      { results: searxngAnswer('q').results.map((r) => ({ url: r.url, title: r.title, snippet: r.content, score: r.score, publishedAt: r.publishedDate, engine: r.engine })), warnings: [], answer: 'a' },
      { id: 'srch_abc', query: 'q', provider: 'searxng', maxResults: 10, latencyMs: 3 },
    );
    expect(validate(output)).toBe(true);
    const result = output.results[0]!;
    for (const bad of [
      { ...output, object: 'svc.search.v2' },
      { ...output, results: [{ ...result, url: 'ftp://example.com/' }] },
      { ...output, results: [{ ...result, url: '/relative' }] },
      { ...output, results: [{ ...result, score: 1.5 }] },
      { ...output, results: [{ ...result, rank: 0 }] },
      { ...output, results: [{ ...result, publishedAt: 'yesterday' }] },
      { ...output, results: [{ ...result, extra: true }] },
      { ...output, warnings: undefined },
      { ...output, latencyMs: -1 },
      { ...output, query: '' },
    ]) {
      expect(validate(bad)).toBe(false);
    }
  });

  it('answers other methods with the error envelope', async () => {
    const response = await fetch(`${server.url}/v1/schemas/svc.search.v1.json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(405);
    expect(((await response.json()) as { code: string }).code).toBe('method_not_allowed');
  });
});

/**
 * The keys of issue 46 items 10 and 11: `graphql.suggestions`, `server.corsOrigins` and `metrics.*`.
 * Defaults closed; a bad value stops the start with a message naming the key.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';

const token = 'f'.repeat(32);

describe('exposure config', () => {
  it('defaults: no suggestions, no other web origins, /metrics for this machine only', () => {
    const config = parseConfig({});
    expect(config.graphql).toEqual({ suggestions: false });
    expect(config.server.corsOrigins).toEqual([]);
    expect(config.metrics).toEqual({ token: null, port: null, host: '127.0.0.1' });
  });

  it('server.corsOrigins takes origins only: never "*", a path or a trailing slash', () => {
    expect(parseConfig({ server: { corsOrigins: ['https://console.example.com'] } }).server.corsOrigins).toEqual(['https://console.example.com']);
    for (const bad of ['*', 'https://console.example.com/', 'https://console.example.com/app', 'console.example.com']) {
      expect(() => parseConfig({ server: { corsOrigins: [bad] } }), bad).toThrow(/invalid config at server\.corsOrigins\.0: expected an origin/);
    }
  });

  it('metrics.token is a reference (env: or file:), read at start, at least 32 characters', () => {
    expect(parseConfig({ metrics: { token: 'env:METRICS_TOKEN' } }, { METRICS_TOKEN: token }).metrics.token).toBe(token);
    const file = join(mkdtempSync(join(tmpdir(), 'svc-metrics-')), 'token');
    writeFileSync(file, `${token}\n`);
    expect(parseConfig({ metrics: { token: `file:${file}` } }).metrics.token).toBe(token);
    expect(() => parseConfig({ metrics: { token } })).toThrow(/invalid config at metrics\.token: expected a reference env:NAME or file:PATH/);
    expect(() => parseConfig({ metrics: { token: 'env:METRICS_TOKEN' } }, {})).toThrow('invalid config at metrics.token: environment variable METRICS_TOKEN is not set');
    expect(() => parseConfig({ metrics: { token: 'env:METRICS_TOKEN' } }, { METRICS_TOKEN: 'short' })).toThrow(/invalid config at metrics\.token: the token is 5 characters; use at least 32/);
  });

  it('metrics.port must differ from the main port (PORT included)', () => {
    expect(parseConfig({ metrics: { port: 9464 } }).metrics).toEqual({ token: null, port: 9464, host: '127.0.0.1' });
    expect(() => parseConfig({ metrics: { port: 8080 } })).toThrow(/invalid config at metrics\.port: 8080 is server\.port too/);
    expect(() => parseConfig({ metrics: { port: 9464 } }, { PORT: '9464' })).toThrow(/invalid config at metrics\.port/);
    expect(() => parseConfig({ metrics: { port: 0 } })).toThrow(/invalid config at metrics\.port/);
  });

  it('graphql takes suggestions only', () => {
    expect(parseConfig({ graphql: { suggestions: true } }).graphql.suggestions).toBe(true);
    expect(() => parseConfig({ graphql: { introspection: true } })).toThrow('invalid config: unknown key graphql.introspection');
  });
});

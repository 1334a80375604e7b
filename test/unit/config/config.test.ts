import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../../server/config/config.ts';
import { discounted, formatMicros, parseMicros } from '../../../server/config/money.ts';

const repo = resolve(import.meta.dirname, '../../..');

function yamlFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-config-')), 'svc.yaml');
  writeFileSync(path, text);
  return path;
}

describe('config', () => {
  it('the embedded defaults hold the 11 product models, the promotion and the plans', () => {
    const config = parseConfig({});
    expect(Object.keys(config.models)).toHaveLength(11);
    expect(config.models['svc-2.1-fast']).toMatchObject({ tier: 'fast', inputPrice: 140_000, outputPrice: 280_000 });
    expect(config.models['svc-music']).toMatchObject({ tier: 'premium', inputPrice: 435_000, outputPrice: 870_000 });
    expect(config.promotion).toEqual({ fast: 7000, premium: 7500 });
    expect(config.plans.max.packages.map((pkg) => pkg.id)).toEqual(['max_x5', 'max_x20']);
    expect(config.database.url).toBeUndefined();
    expect(config.redis.url).toBeUndefined();
    expect(config.server.baseUrl).toBe('http://localhost:8080');
  });

  it('svc.config.example.yaml documents exactly the defaults', () => {
    const fromExample = loadConfig({ SVC_CONFIG: join(repo, 'svc.config.example.yaml') });
    expect(fromExample).toEqual(loadConfig({}));
  });

  it('environment variables override the file', () => {
    const config = loadConfig({
      SVC_CONFIG: yamlFile('server:\n  port: 9000\n'),
      PORT: '9100',
      DATABASE_URL: 'postgres://db/svc',
      REDIS_URL: 'redis://cache:6379',
      SVC_UPSTREAM_URL: 'http://127.0.0.1:8000/v1/',
      SVC_UPSTREAM_API_KEY: 'sk-local',
    });
    expect(config.server.port).toBe(9100);
    expect(config.database.url).toBe('postgres://db/svc');
    expect(config.redis.url).toBe('redis://cache:6379');
    expect(config.defaultUpstream).toEqual({ baseUrl: 'http://127.0.0.1:8000/v1', apiKey: 'sk-local', modelNames: {}, source: 'env' });
  });

  it('SVC_MAIL_LOG_OUTBOX=1 prints the development outbox; anything else leaves it off', () => {
    expect(parseConfig({}).mail.logOutbox).toBe(false);
    expect(parseConfig({}, { SVC_MAIL_LOG_OUTBOX: '1' }).mail.logOutbox).toBe(true);
    expect(parseConfig({}, { SVC_MAIL_LOG_OUTBOX: 'yes' }).mail.logOutbox).toBe(false);
  });

  it.each([
    [{ promotion: { fast: 1.5, premium: 0.75 } }, 'promotion.fast'],
    [{ server: { port: 'eighty' } }, 'server.port'],
    [{ currency: 'dollars' }, 'currency'],
    [{ models: { 'svc-x': { tier: 'medium', inputPrice: 1, outputPrice: 1 } } }, 'models.svc-x.tier'],
    [{ models: { 'svc-x': { tier: 'fast', inputPrice: 0.1234567, outputPrice: 1 } } }, 'models.svc-x.inputPrice'],
    [{ models: { auto: { tier: 'fast', inputPrice: 1, outputPrice: 1, routesTo: 'ghost' } } }, 'models.auto.routesTo'],
    [{ serverr: {} }, 'serverr'],
    [{ rateLimits: { ipPerMinute: 0 } }, 'rateLimits.ipPerMinute'],
    [{ media: { storage: { kind: 'ftp' } } }, 'media.storage.kind'],
    [{ media: { storage: { kind: 's3' } } }, 'media.storage.bucket'],
    [{ media: { storage: { kind: 's3', bucket: 'b', accessKeyIdEnv: 'K' } } }, 'media.storage.secretAccessKeyEnv'],
    [{ media: { storage: { kind: 's3', bucket: 'b', prefix: '../x' } } }, 'media.storage.prefix'],
    [{ media: { retentionDays: 0 } }, 'media.retentionDays'],
    [{ media: { tts: { engine: 'festival' } } }, 'media.tts.engine'],
    [{ enterprise: { maxOwnedOrganisations: 0 } }, 'enterprise.maxOwnedOrganisations'],
    [{ gateway: { httpLayer: 'express' } }, 'gateway.httpLayer'],
    [{ gateway: { upstreamClient: 'fetch' } }, 'gateway.upstreamClient'],
  ])('invalid config %j names its key', (input, key) => {
    expect(() => parseConfig(input)).toThrow(ConfigError);
    expect(() => parseConfig(input)).toThrow(key);
  });

  it('media defaults: local storage under the data directory, 30 days, the embedded speech engine', () => {
    const config = parseConfig({ database: { dataDir: '/srv/svc' } });
    expect(config.media).toEqual({
      storage: { kind: 'local', dir: join('/srv/svc', 'media') },
      retentionDays: 30,
      retentionSweepMinutes: 60,
      imageOutputTokens: 1000,
      audioTokensPerSecond: 25,
      maxMusicSeconds: 240,
      tts: { engine: 'embedded' },
    });
  });

  it('S3 credentials are environment references, resolved once and required when named', () => {
    const s3 = { kind: 's3', bucket: 'media', accessKeyIdEnv: 'MEDIA_KEY', secretAccessKeyEnv: 'MEDIA_SECRET', forcePathStyle: true };
    const config = parseConfig({ media: { storage: s3 } }, { MEDIA_KEY: 'id', MEDIA_SECRET: 'secret' });
    expect(config.media.storage).toEqual({ ...s3, region: 'us-east-1', prefix: '' });
    expect(config.secrets).toMatchObject({ MEDIA_KEY: 'id', MEDIA_SECRET: 'secret' });
    expect(() => parseConfig({ media: { storage: s3 } }, { MEDIA_KEY: 'id' })).toThrow(
      'invalid config at media.storage.secretAccessKeyEnv: environment variable MEDIA_SECRET is not set',
    );
  });

  it('a bad environment value names the variable', () => {
    expect(() => parseConfig({}, { PORT: 'abc' })).toThrow('PORT');
    expect(() => parseConfig({}, { SVC_UPSTREAM_URL: 'not a url' })).toThrow('SVC_UPSTREAM_URL');
  });

  it('the server exits non-zero at start with a message naming the key', () => {
    const node = join(repo, 'node_modules/.bin/node');
    const result = spawnSync(node, [join(repo, 'server/main.ts')], {
      env: { PATH: process.env.PATH, SVC_CONFIG: yamlFile('promotion:\n  fast: 2\n  premium: 0.75\n') },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('promotion.fast');
  });
});

describe('money', () => {
  it('parses decimals exactly into micros', () => {
    expect(parseMicros('0.14')).toBe(140_000);
    expect(parseMicros(0.435)).toBe(435_000);
    expect(parseMicros(39)).toBe(39_000_000);
    expect(parseMicros('0.0000001')).toBeNull();
    expect(parseMicros(-1)).toBeNull();
    expect(parseMicros('1e3')).toBeNull();
  });

  it('formats and discounts in integers', () => {
    expect(formatMicros(42_000)).toBe('0.042');
    expect(formatMicros(9_000_000)).toBe('9.00');
    expect(formatMicros(108_750)).toBe('0.10875');
    expect(discounted(140_000, 7000)).toBe(42_000);
    expect(discounted(435_000, 7500)).toBe(108_750);
    expect(discounted(3, 5000)).toBe(2); // half rounds up
  });
});

/**
 * `GET|HEAD /v1/media/<id>.<ext>` on the real app: exact bytes, ranges, conditional requests, and a 404
 * envelope (never a 500, never a file outside the store) for anything that is not a stored object.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalMediaStorage } from '../../../server/modules/media/storage.local.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { startS3, type TestS3 } from '../../helpers/s3-server.ts';

/** A raw request, so the path reaches the server exactly as written (fetch would resolve `..`). */
function rawGet(url: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}${path}`, { method: 'GET' }, (response) => {
      let body = '';
      response.setEncoding('latin1');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('media route (local storage)', () => {
  let mode: Awaited<ReturnType<typeof realMode>>;
  let testApp: TestApp;
  let dir: string;
  let storage: LocalMediaStorage;
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(5000)]);
  let url: string;
  let id: string;

  beforeAll(async () => {
    mode = await realMode();
    dir = mkdtempSync(join(tmpdir(), 'svc-media-route-'));
    testApp = await startApp(mode.config, { config: { media: { storage: { kind: 'local', dir: join(dir, 'media') } } } });
    storage = new LocalMediaStorage(join(dir, 'media'));
    const stored = await storage.put(png, { ext: 'png' });
    id = stored.id;
    url = `${testApp.url}/v1/media/${id}.png`;
  });

  afterAll(async () => {
    await testApp?.close();
    await mode?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the exact bytes with the type, an ETag and private immutable caching, without credentials', async () => {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(png)).toBe(true);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('content-length')).toBe(String(png.length));
    expect(response.headers.get('etag')).toBe(`"${id}"`);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const cacheControl = response.headers.get('cache-control')!;
    expect(cacheControl).toMatch(/^private, max-age=\d+, immutable$/);
    // Fresh until retention (30 days by default) deletes it.
    const maxAge = Number(/max-age=(\d+)/.exec(cacheControl)![1]);
    expect(maxAge).toBeGreaterThan(30 * 86_400 - 120);
    expect(maxAge).toBeLessThanOrEqual(30 * 86_400);
  });

  it('answers a matching If-None-Match with 304', async () => {
    const response = await fetch(url, { headers: { 'if-none-match': `"${id}"` } });
    expect(response.status).toBe(304);
    expect(response.headers.get('etag')).toBe(`"${id}"`);
  });

  it('serves single byte ranges with 206 and content-range', async () => {
    const cases: [string, number, number][] = [
      ['bytes=0-99', 0, 99],
      ['bytes=100-', 100, png.length - 1],
      ['bytes=-500', png.length - 500, png.length - 1],
      ['bytes=4000-999999', 4000, png.length - 1],
    ];
    for (const [range, start, end] of cases) {
      const response = await fetch(url, { headers: { range } });
      expect(response.status, range).toBe(206);
      expect(response.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/${png.length}`);
      expect(response.headers.get('content-length'), range).toBe(String(end - start + 1));
      expect(Buffer.from(await response.arrayBuffer()).equals(png.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('answers an unsatisfiable range with 416, content-range */size and the envelope', async () => {
    for (const range of [`bytes=${png.length}-`, 'bytes=999999-1000000', 'bytes=-0']) {
      const response = await fetch(url, { headers: { range } });
      expect(response.status, range).toBe(416);
      expect(response.headers.get('content-range')).toBe(`bytes */${png.length}`);
      const body = (await response.json()) as any;
      expect(body).toMatchObject({ ok: false, code: 'range_not_satisfiable', error: { code: 'range_not_satisfiable' } });
    }
  });

  it('sends the whole file for several ranges, a malformed Range, or a stale If-Range', async () => {
    const variants: Record<string, string>[] = [{ range: 'bytes=0-1,5-6' }, { range: 'items=0-1' }, { range: 'bytes=9-3' }, { range: 'bytes=0-1', 'if-range': '"other"' }];
    for (const headers of variants) {
      const response = await fetch(url, { headers });
      expect(response.status, JSON.stringify(headers)).toBe(200);
      expect(Buffer.from(await response.arrayBuffer()).equals(png)).toBe(true);
    }
    const matching = await fetch(url, { headers: { range: 'bytes=0-1', 'if-range': `"${id}"` } });
    expect(matching.status).toBe(206);
  });

  it('HEAD gives the headers and no body', async () => {
    const response = await fetch(url, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(png.length));
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('etag')).toBe(`"${id}"`);
    expect((await response.arrayBuffer()).byteLength).toBe(0);
    const ranged = await fetch(url, { method: 'HEAD', headers: { range: 'bytes=0-9' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-length')).toBe('10');
  });

  it('an unknown, guessed or malformed name is a 404 envelope', async () => {
    const names = [
      `${randomBytes(16).toString('base64url')}.png`, // well-formed, never issued
      `${id}.jpg`, // right id, wrong extension
      `${id}.svg`,
      `${id}.PNG`,
      id,
      `${id}.png.png`,
      `${id.slice(1)}.png`,
      'x'.repeat(300) + '.png',
      'not-an-id',
      '',
      '%00.png',
    ];
    for (const name of names) {
      const response = await fetch(`${testApp.url}/v1/media/${name}`);
      expect(response.status, name).toBe(404);
      expect(response.headers.get('x-svc-error-code'), name).toBe('not_found');
      const body = (await response.json()) as any;
      expect(body, name).toMatchObject({ ok: false, code: 'not_found', error: { type: 'not_found_error' } });
    }
  });

  it('path traversal reaches nothing outside the store', async () => {
    // A file beside the store that a traversal would be after.
    writeFileSync(join(dir, 'secret.png'), 'TOP-SECRET-CONTENT');
    const shard = id.slice(0, 2);
    const paths = [
      '/v1/media/../secret.png',
      '/v1/media/..%2Fsecret.png',
      '/v1/media/%2e%2e%2fsecret.png',
      '/v1/media/..%5Csecret.png',
      `/v1/media/${shard}/${id}.png`,
      `/v1/media/${shard}%2F${id}.png`,
      '/v1/media/%2Fetc%2Fpasswd',
      '/v1/media/....//....//etc/passwd',
      '/v1/media/%252e%252e%252fsecret.png',
      `/v1/media/${id}.png%00.txt`,
    ];
    for (const path of paths) {
      const response = await rawGet(testApp.url, path);
      expect([400, 404], path).toContain(response.status);
      expect(response.body, path).not.toContain('TOP-SECRET');
      expect(response.body, path).not.toContain('root:');
      expect(JSON.parse(response.body).ok, path).toBe(false);
    }
  });
});

describe('media route (S3 storage)', () => {
  let s3: TestS3;
  let mode: Awaited<ReturnType<typeof realMode>>;
  let testApp: TestApp;

  beforeAll(async () => {
    s3 = await startS3();
    mode = await realMode();
    testApp = await startApp(mode.config, {
      config: { media: { storage: { kind: 's3', endpoint: s3.endpoint, bucket: s3.bucket, forcePathStyle: true, accessKeyIdEnv: 'K', secretAccessKeyEnv: 'S' } } },
      env: { K: s3.accessKeyId, S: s3.secretAccessKey },
    });
  });

  afterAll(async () => {
    await testApp?.close();
    await mode?.cleanup();
    await s3?.close();
  });

  it('serves what the service stored, whole and by range', async () => {
    // The app's own MediaService is not exposed yet; a second one on the same bucket stores the file.
    const { MediaService } = await import('../../../server/modules/media/media.service.ts');
    const { pino } = await import('pino');
    const media = new MediaService(testApp.config, pino({ level: 'silent' }));
    const audio = randomBytes(20_000);
    const stored = await media.store(audio, { ext: 'mp3', contentType: 'audio/mpeg' });
    expect(stored.url).toBe(`${testApp.config.server.baseUrl}/v1/media/${stored.id}.mp3`);
    const path = `/v1/media/${stored.id}.mp3`;

    const whole = await fetch(`${testApp.url}${path}`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await whole.arrayBuffer()).equals(audio)).toBe(true);

    const part = await fetch(`${testApp.url}${path}`, { headers: { range: 'bytes=19990-' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 19990-19999/20000');
    expect(Buffer.from(await part.arrayBuffer()).equals(audio.subarray(19990))).toBe(true);

    expect((await fetch(`${testApp.url}/v1/media/${randomBytes(16).toString('base64url')}.mp3`)).status).toBe(404);
    await media.close();
  });
});

describe('media route when storage is down', () => {
  it('is a 503 the client may retry, not a 500', async () => {
    const mode = await realMode();
    const testApp = await startApp(mode.config, {
      config: { media: { storage: { kind: 's3', endpoint: 'http://127.0.0.1:9', bucket: 'gone', forcePathStyle: true, accessKeyIdEnv: 'K', secretAccessKeyEnv: 'S' } } },
      env: { K: 'k', S: 's' },
    });
    try {
      const response = await fetch(`${testApp.url}/v1/media/${randomBytes(16).toString('base64url')}.png`);
      expect(response.status).toBe(503);
      expect(response.headers.get('x-svc-error-code')).toBe('service_unavailable');
    } finally {
      await testApp.close();
      await mode.cleanup();
    }
  });
});

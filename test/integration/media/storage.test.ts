/**
 * The one storage contract, run against both backends: a local directory and a real S3-compatible
 * server (s3rver on loopback, spoken to with the AWS SDK).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { createMediaStorage } from '../../../server/modules/media/media.service.ts';
import type { MediaStorage } from '../../../server/modules/media/media.storage.ts';
import { LocalMediaStorage } from '../../../server/modules/media/storage.local.ts';
import { startS3, type TestS3 } from '../../helpers/s3-server.ts';

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

let s3: TestS3;
let localDir: string;
const backends: Record<string, () => MediaStorage> = {};

beforeAll(async () => {
  s3 = await startS3();
  localDir = mkdtempSync(join(tmpdir(), 'svc-media-'));
  backends.local = () => createMediaStorage(parseConfig({ media: { storage: { kind: 'local', dir: localDir } } }));
  backends.s3 = () =>
    createMediaStorage(
      parseConfig(
        {
          media: {
            storage: {
              kind: 's3',
              endpoint: s3.endpoint,
              bucket: s3.bucket,
              prefix: 'media/',
              forcePathStyle: true,
              accessKeyIdEnv: 'TEST_S3_KEY',
              secretAccessKeyEnv: 'TEST_S3_SECRET',
            },
          },
        },
        { TEST_S3_KEY: s3.accessKeyId, TEST_S3_SECRET: s3.secretAccessKey },
      ),
    );
});

afterAll(async () => {
  await s3?.close();
  rmSync(localDir, { recursive: true, force: true });
});

describe.each(['local', 's3'])('%s media storage', (kind) => {
  let storage: MediaStorage;
  beforeAll(() => {
    storage = backends[kind]!();
  });
  afterAll(() => storage.close());

  it('stores a buffer under a fresh 128-bit id and gives back exactly its bytes', async () => {
    const bytes = randomBytes(70_000);
    const stored = await storage.put(bytes, { ext: 'png', contentType: 'image/png' });
    expect(stored).toMatchObject({ ext: 'png', size: 70_000, contentType: 'image/png' });
    expect(stored.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(stored.id, 'base64url')).toHaveLength(16);

    const info = await storage.stat(stored);
    expect(info).toMatchObject({ id: stored.id, ext: 'png', size: 70_000, contentType: 'image/png' });
    expect(Math.abs(info!.createdAt.getTime() - Date.now())).toBeLessThan(60_000);

    const opened = await storage.open(stored);
    expect(opened!.info.size).toBe(70_000);
    expect((await bytesOf(opened!.body)).equals(bytes)).toBe(true);
  });

  it('reads a byte range', async () => {
    const bytes = randomBytes(10_000);
    const stored = await storage.put(bytes, { ext: 'mp3' });
    const opened = await storage.open(stored, { start: 1000, end: 1999 });
    expect(opened!.info.size).toBe(10_000);
    expect((await bytesOf(opened!.body)).equals(bytes.subarray(1000, 2000))).toBe(true);
    const last = await storage.open(stored, { start: 9999, end: 9999 });
    expect((await bytesOf(last!.body)).equals(bytes.subarray(9999))).toBe(true);
  });

  it('stores a stream of unknown length, large enough for a multipart upload on S3', async () => {
    const chunk = randomBytes(256 * 1024);
    const count = 26; // 6.5 MiB: more than the SDK's 5 MiB part size
    const stored = await storage.put(Readable.from((function* () {
      for (let i = 0; i < count; i++) yield chunk;
    })()), { ext: 'wav' });
    expect(stored.size).toBe(chunk.length * count);
    const opened = await storage.open(stored, { start: chunk.length * 25, end: chunk.length * 26 - 1 });
    expect((await bytesOf(opened!.body)).equals(chunk)).toBe(true);
    expect((await storage.stat(stored))!.size).toBe(chunk.length * count);
  });

  it('an unknown id is null, and delete is idempotent', async () => {
    const ghost = { id: randomBytes(16).toString('base64url'), ext: 'png' as const };
    expect(await storage.stat(ghost)).toBeNull();
    expect(await storage.open(ghost)).toBeNull();
    await storage.delete(ghost);

    const stored = await storage.put(Buffer.from('bye'), { ext: 'gif' });
    await storage.delete(stored);
    await storage.delete(stored);
    expect(await storage.stat(stored)).toBeNull();
    expect(await storage.open(stored, { start: 0, end: 1 })).toBeNull();
    // Same id, other extension: another object (the URL is the whole capability).
    const other = await storage.put(Buffer.from('x'), { ext: 'png' });
    expect(await storage.stat({ id: other.id, ext: 'jpg' })).toBeNull();
  });

  it('lists what is older than a cutoff', async () => {
    const stored = await storage.put(Buffer.from('old enough'), { ext: 'flac' });
    const future = new Date(Date.now() + 60_000);
    const past = new Date(Date.now() - 60_000);
    expect((await all(storage.listOlderThan(future))).map((info) => info.id)).toContain(stored.id);
    expect((await all(storage.listOlderThan(past))).map((info) => info.id)).not.toContain(stored.id);
    const listed = (await all(storage.listOlderThan(future))).find((info) => info.id === stored.id);
    expect(listed).toMatchObject({ ext: 'flac', size: 10, contentType: 'audio/flac' });
  });

  it('a failing source stores nothing', async () => {
    const before = (await all(storage.listOlderThan(new Date(Date.now() + 60_000)))).length;
    const failing = Readable.from((async function* () {
      yield randomBytes(1000);
      throw new Error('upstream went away');
    })());
    await expect(storage.put(failing, { ext: 'mp3' })).rejects.toThrow('upstream went away');
    expect((await all(storage.listOlderThan(new Date(Date.now() + 60_000)))).length).toBe(before);
  });

  it('refuses a content type that does not match the extension', async () => {
    await expect(storage.put(Buffer.from('<svg/>'), { ext: 'png', contentType: 'image/svg+xml' })).rejects.toThrow('does not match');
  });
});

describe('local media storage on disk', () => {
  it('keeps files under <dir>/<2 chars>/<id>.<ext>, ages by file time, and sweeps abandoned partial writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-media-disk-'));
    const storage = new LocalMediaStorage(join(dir, 'media'));
    expect(await all(storage.listOlderThan(new Date()))).toEqual([]);
    const stored = await storage.put(Buffer.from('abc'), { ext: 'png' });
    const shard = join(dir, 'media', stored.id.slice(0, 2));
    expect(readdirSync(shard)).toEqual([`${stored.id}.png`]);

    const monthAgo = new Date(Date.now() - 31 * 86_400_000);
    utimesSync(join(shard, `${stored.id}.png`), monthAgo, monthAgo);
    expect((await all(storage.listOlderThan(new Date(Date.now() - 30 * 86_400_000)))).map((info) => info.id)).toEqual([stored.id]);

    const part = join(shard, `.${randomBytes(16).toString('base64url')}.mp3.part`);
    writeFileSync(part, 'half');
    expect(await storage.sweepAbandoned(new Date(Date.now() - 3_600_000))).toBe(0);
    utimesSync(part, monthAgo, monthAgo);
    expect(await storage.sweepAbandoned(new Date(Date.now() - 3_600_000))).toBe(1);
    expect(readdirSync(shard)).toEqual([`${stored.id}.png`]);
    expect(await text((await storage.open(stored))!.body)).toBe('abc');
    rmSync(dir, { recursive: true, force: true });
  });
});

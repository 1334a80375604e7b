/**
 * The retention job: deletes what is older than `media.retentionDays`, keeps the rest, and is safe when
 * every instance runs it at once (local directory and S3).
 */
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { MediaRetention } from '../../../server/modules/media/media.retention.ts';
import { createMediaStorage } from '../../../server/modules/media/media.service.ts';
import type { MediaStorage, StoredMedia } from '../../../server/modules/media/media.storage.ts';
import { LocalMediaStorage } from '../../../server/modules/media/storage.local.ts';
import { startS3, type TestS3 } from '../../helpers/s3-server.ts';

const day = 86_400_000;
const log = pino({ level: 'silent' });

describe('media retention, local directory', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-retention-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('deletes objects older than retentionDays by file time and keeps younger ones', async () => {
    const storage = new LocalMediaStorage(join(dir, 'a'));
    const age = async (stored: StoredMedia, days: number) => {
      const when = new Date(Date.now() - days * day);
      utimesSync(join(storage.dir, stored.id.slice(0, 2), `${stored.id}.${stored.ext}`), when, when);
    };
    const old = await storage.put(Buffer.from('old'), { ext: 'png' });
    const older = await storage.put(Buffer.from('older'), { ext: 'mp3' });
    const young = await storage.put(Buffer.from('young'), { ext: 'wav' });
    await age(old, 8);
    await age(older, 40);
    await age(young, 6);

    const retention = new MediaRetention(storage, { retentionDays: 7, sweepMinutes: 60 }, log);
    expect(await retention.sweep()).toEqual({ deleted: 2, abandoned: 0 });
    expect(await storage.stat(old)).toBeNull();
    expect(await storage.stat(older)).toBeNull();
    expect(await storage.stat(young)).not.toBeNull();
    expect(await retention.sweep()).toEqual({ deleted: 0, abandoned: 0 });
  });

  it('two instances sweeping the same directory at once delete each object once, without errors', async () => {
    const root = join(dir, 'b');
    const first = new LocalMediaStorage(root);
    const second = new LocalMediaStorage(root);
    const stored = await Promise.all(Array.from({ length: 40 }, (_, i) => first.put(Buffer.from(`file ${i}`), { ext: 'png' })));
    const now = new Date(Date.now() + 31 * day);
    const results = await Promise.all([
      new MediaRetention(first, { retentionDays: 30, sweepMinutes: 60 }, log).sweep(now),
      new MediaRetention(second, { retentionDays: 30, sweepMinutes: 60 }, log).sweep(now),
    ]);
    // Both may count an object they raced for; what matters is that all are gone and nothing threw.
    expect(results[0]!.deleted + results[1]!.deleted).toBeGreaterThanOrEqual(40);
    for (const ref of stored) expect(await first.stat(ref)).toBeNull();
  });

  it('runs on its own timer and stops cleanly', async () => {
    const storage = new LocalMediaStorage(join(dir, 'c'));
    const stored = await storage.put(Buffer.from('expired'), { ext: 'png' });
    const when = new Date(Date.now() - 2 * day);
    utimesSync(join(storage.dir, stored.id.slice(0, 2), `${stored.id}.png`), when, when);
    const retention = new MediaRetention(storage, { retentionDays: 1, sweepMinutes: 60, firstSweepDelayMs: 10 }, log);
    retention.start();
    await vi.waitFor(async () => expect(await storage.stat(stored)).toBeNull(), { timeout: 5000, interval: 20 });
    await retention.stop();
  });
});

describe('media retention, S3', () => {
  let s3: TestS3;
  let storage: MediaStorage;
  beforeAll(async () => {
    s3 = await startS3('retention');
    const config = parseConfig(
      { media: { storage: { kind: 's3', endpoint: s3.endpoint, bucket: s3.bucket, forcePathStyle: true, accessKeyIdEnv: 'K', secretAccessKeyEnv: 'S' } } },
      { K: s3.accessKeyId, S: s3.secretAccessKey },
    );
    storage = createMediaStorage(config);
  });
  afterAll(async () => {
    await storage?.close();
    await s3?.close();
  });

  it('deletes by the objects’ LastModified', async () => {
    const stored = await Promise.all([1, 2, 3].map((i) => storage.put(Buffer.from(`object ${i}`), { ext: 'flac' })));
    const retention = new MediaRetention(storage, { retentionDays: 30, sweepMinutes: 60 }, log);
    expect((await retention.sweep(new Date(Date.now() + 29 * day))).deleted).toBe(0);
    expect((await retention.sweep(new Date(Date.now() + 31 * day))).deleted).toBe(3);
    for (const ref of stored) expect(await storage.stat(ref)).toBeNull();
  });
});

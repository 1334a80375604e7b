/**
 * The media service as the executors will use it: store → a capability URL on the configured base URL
 * that serves the bytes, and the embedded speech engine (or none) per config.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { MediaService } from '../../../server/modules/media/media.service.ts';
import { sniffImage } from '../../../server/modules/media/media.types.ts';

const log = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'svc-media-service-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('media service', () => {
  it('stores generated speech and names its URL under the base URL', async () => {
    const config = parseConfig({ server: { baseUrl: 'https://svc.example.com/' }, database: { dataDir: dir } });
    const media = new MediaService(config, log);
    try {
      expect(media.speech).not.toBeNull();
      const audio = media.speech!.speak({ input: 'Stored for later.', voice: 'sage', format: 'mp3' });
      const stored = await media.store(await audio.whole(), { ext: 'mp3', contentType: audio.contentType });
      expect(stored.url).toBe(`https://svc.example.com/v1/media/${stored.id}.mp3`);
      expect(stored.size).toBeGreaterThan(1000);
      const info = await media.storage.stat(stored);
      expect(info).toMatchObject({ size: stored.size, contentType: 'audio/mpeg' });
      expect(media.expiresAt(info!.createdAt).getTime() - info!.createdAt.getTime()).toBe(30 * 86_400_000);
    } finally {
      await media.close();
    }
  });

  it('has no speech engine when media.tts.engine is none', async () => {
    const media = new MediaService(parseConfig({ database: { dataDir: dir }, media: { tts: { engine: 'none' } } }), log);
    expect(media.speech).toBeNull();
    await media.close();
  });

  it('tells image types from their bytes (upstream b64_json carries none), and refuses SVG', () => {
    expect(sniffImage(Buffer.from('89504e470d0a1a0a0000', 'hex'))).toEqual({ ext: 'png', contentType: 'image/png' });
    expect(sniffImage(Buffer.from('ffd8ffe000104a464946', 'hex'))).toEqual({ ext: 'jpg', contentType: 'image/jpeg' });
    expect(sniffImage(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1'))).toEqual({ ext: 'webp', contentType: 'image/webp' });
    expect(sniffImage(Buffer.from('GIF89a', 'latin1'))).toEqual({ ext: 'gif', contentType: 'image/gif' });
    expect(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(sniffImage(Buffer.from('<html>'))).toBeNull();
  });
});

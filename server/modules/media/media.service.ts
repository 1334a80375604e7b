/**
 * The media domain as the rest of svc sees it: where generated files go (`store` → a capability URL),
 * the retention job, and the embedded speech engine. The image and speech executors call this; the
 * `/v1/media` route reads through `storage`.
 */
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import { MediaRetention } from './media.retention.ts';
import { mediaName, type MediaBody, type MediaRef, type MediaStorage, type PutOptions, type StoredMedia } from './media.storage.ts';
import { EspeakEngine } from './speech/espeak.engine.ts';
import type { SpeechEngine } from './speech/speech.engine.ts';
import { LocalMediaStorage } from './storage.local.ts';
import type * as S3Storage from './storage.s3.ts';

/** The S3 storage and its SDK (~4 MB of heap) load only when `media.storage.kind` is `s3`. */
const require = createRequire(import.meta.url);

export function createMediaStorage(config: Config): MediaStorage {
  const storage = config.media.storage;
  switch (storage.kind) {
    case 'local':
      return new LocalMediaStorage(storage.dir);
    case 's3': {
      const { S3MediaStorage } = require('./storage.s3.ts') as typeof S3Storage;
      return new S3MediaStorage(storage, {
        accessKeyId: storage.accessKeyIdEnv ? config.secrets[storage.accessKeyIdEnv] : undefined,
        secretAccessKey: storage.secretAccessKeyEnv ? config.secrets[storage.secretAccessKeyEnv] : undefined,
      });
    }
  }
}

export class MediaService {
  readonly storage: MediaStorage;
  readonly retention: MediaRetention;
  /** What speaks for `svc-tts` without an upstream (config `media.tts.engine`); null = none. Starts on first use. */
  readonly speech: SpeechEngine | null;
  private readonly baseUrl: string;
  private readonly retentionDays: number;

  constructor(config: Config, log: Logger, storage: MediaStorage = createMediaStorage(config)) {
    this.storage = storage;
    this.baseUrl = config.server.baseUrl;
    this.retentionDays = config.media.retentionDays;
    this.speech = config.media.tts.engine === 'embedded' ? new EspeakEngine() : null;
    this.retention = new MediaRetention(storage, { retentionDays: config.media.retentionDays, sweepMinutes: config.media.retentionSweepMinutes }, log);
  }

  /** Stores a generated file and returns it with its public URL `<baseUrl>/v1/media/<id>.<ext>`. */
  async store(body: MediaBody, options: PutOptions): Promise<StoredMedia & { url: string }> {
    const stored = await this.storage.put(body, options);
    return { ...stored, url: this.urlFor(stored) };
  }

  urlFor(ref: MediaRef): string {
    return `${this.baseUrl}/v1/media/${mediaName(ref)}`;
  }

  /** When an object created at `createdAt` will be deleted by retention. */
  expiresAt(createdAt: Date): Date {
    return new Date(createdAt.getTime() + this.retentionDays * 86_400_000);
  }

  start(): void {
    this.retention.start();
  }

  async close(): Promise<void> {
    await this.retention.stop();
    await this.speech?.close();
    await this.storage.close();
  }
}

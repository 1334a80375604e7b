/**
 * Media in an S3-compatible bucket (AWS S3, MinIO, R2, Ceph, …): one object per media file, key
 * `<prefix><id>.<ext>`. Buffers go up with one PutObject; streams of unknown length through the SDK's
 * multipart `Upload` (a single PutObject when they turn out small), which aborts the multipart upload on
 * failure. Uploads orphaned by a crash are the bucket's job: an `AbortIncompleteMultipartUpload` lifecycle
 * rule (docs/media.md).
 */
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { MediaStorageConfig } from '../../config/config.ts';
import {
  checkPutOptions,
  mediaName,
  newMediaId,
  parseMediaName,
  type ByteRange,
  type MediaBody,
  type MediaInfo,
  type MediaRef,
  type MediaStorage,
  type PutOptions,
  type StoredMedia,
} from './media.storage.ts';
import { mediaTypes } from './media.types.ts';

type S3Config = Extract<MediaStorageConfig, { kind: 's3' }>;

export class S3MediaStorage implements MediaStorage {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(config: S3Config, credentials: { accessKeyId: string | undefined; secretAccessKey: string | undefined }) {
    this.bucket = config.bucket;
    this.prefix = config.prefix;
    this.client = new S3Client({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      forcePathStyle: config.forcePathStyle,
      ...(credentials.accessKeyId && credentials.secretAccessKey
        ? { credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey } }
        : {}),
      // Checksums only where S3 requires them: many S3-compatible servers reject the newer default
      // (aws-chunked bodies with trailing CRC32 checksums).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  async put(body: MediaBody, options: PutOptions): Promise<StoredMedia> {
    const contentType = checkPutOptions(options);
    const ref: MediaRef = { id: newMediaId(), ext: options.ext };
    const params = { Bucket: this.bucket, Key: this.key(ref), ContentType: contentType };
    if (body instanceof Uint8Array) {
      await this.client.send(new PutObjectCommand({ ...params, Body: body, ContentLength: body.byteLength }));
      return { ...ref, size: body.byteLength, contentType };
    }
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    // pipeline (not pipe) so that a failing source fails the upload instead of leaving it waiting.
    pipeline(body instanceof Readable ? body : Readable.from(body), counted).catch(() => undefined);
    await new Upload({ client: this.client, params: { ...params, Body: counted }, queueSize: 2 }).done();
    return { ...ref, size, contentType };
  }

  async stat(ref: MediaRef): Promise<MediaInfo | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(ref) }));
      return this.info(ref, head.ContentLength ?? 0, head.LastModified ?? new Date(0));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async open(ref: MediaRef, range?: ByteRange): Promise<{ info: MediaInfo; body: Readable } | null> {
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.key(ref), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      const total = object.ContentRange ? Number(object.ContentRange.split('/')[1]) : (object.ContentLength ?? 0);
      return { info: this.info(ref, total, object.LastModified ?? new Date(0)), body: object.Body as Readable };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(ref: MediaRef): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(ref) }));
  }

  async *listOlderThan(cutoff: Date): AsyncIterable<MediaInfo> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix || undefined, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        const ref = object.Key?.startsWith(this.prefix) ? parseMediaName(object.Key.slice(this.prefix.length)) : null;
        if (ref && object.LastModified && object.LastModified < cutoff) yield this.info(ref, object.Size ?? 0, object.LastModified);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async sweepAbandoned(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private key(ref: MediaRef): string {
    return `${this.prefix}${mediaName(ref)}`;
  }

  private info(ref: MediaRef, size: number, createdAt: Date): MediaInfo {
    return { id: ref.id, ext: ref.ext, size, contentType: mediaTypes[ref.ext], createdAt };
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey' || error.name === 'NotFound');
}

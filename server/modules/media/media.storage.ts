/**
 * One interface over where media lives (config `media.storage`): a local directory or an S3-compatible
 * bucket. Objects are immutable and addressed by `{id, ext}`, exactly as in their URL
 * `/v1/media/<id>.<ext>`; the id is 128 bits from the CSPRNG, so knowing the URL is the permission to read.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { isMediaExt, mediaTypes, type MediaExt } from './media.types.ts';

export interface MediaRef {
  id: string;
  ext: MediaExt;
}

export interface StoredMedia extends MediaRef {
  /** Bytes. */
  size: number;
  contentType: string;
}

export interface MediaInfo extends StoredMedia {
  createdAt: Date;
}

/** Inclusive byte offsets, as in HTTP `Range: bytes=start-end`, already checked against the size. */
export interface ByteRange {
  start: number;
  end: number;
}

export type MediaBody = Uint8Array | Readable | AsyncIterable<Uint8Array>;

export interface PutOptions {
  ext: MediaExt;
  /** Checked against `ext` when given; what is served is always the type of `ext` (media.types.ts). */
  contentType?: string;
}

export interface MediaStorage {
  readonly kind: 'local' | 's3';
  /** Stores bytes (a buffer, or a stream consumed to its end) under a new id. Nothing is visible until it is complete. */
  put(body: MediaBody, options: PutOptions): Promise<StoredMedia>;
  stat(ref: MediaRef): Promise<MediaInfo | null>;
  /** The bytes (or the given range of them); null when there is no such object. */
  open(ref: MediaRef, range?: ByteRange): Promise<{ info: MediaInfo; body: Readable } | null>;
  /** Idempotent: deleting what is already gone is not an error (several instances may race to do it). */
  delete(ref: MediaRef): Promise<void>;
  /** Every object created before `cutoff`, for the retention job. */
  listOlderThan(cutoff: Date): AsyncIterable<MediaInfo>;
  /** Removes uploads a crash left half-written, older than `cutoff`; returns how many. */
  sweepAbandoned(cutoff: Date): Promise<number>;
  close(): Promise<void>;
}

const namePattern = /^([A-Za-z0-9_-]{22})\.([a-z0-9]{1,8})$/;

/** 16 bytes from the CSPRNG as 22 base64url characters. */
export function newMediaId(): string {
  return randomBytes(16).toString('base64url');
}

/** `<id>.<ext>` → ref, or null for anything else (so a file name can never leave the storage root). */
export function parseMediaName(name: string): MediaRef | null {
  const match = namePattern.exec(name);
  if (!match || !isMediaExt(match[2]!)) return null;
  return { id: match[1]!, ext: match[2] };
}

export function mediaName(ref: MediaRef): string {
  return `${ref.id}.${ref.ext}`;
}

export function checkPutOptions(options: PutOptions): string {
  const contentType = mediaTypes[options.ext];
  if (!contentType) throw new Error(`media: cannot store files of type .${String(options.ext)}`);
  const given = options.contentType?.split(';')[0]?.trim().toLowerCase();
  if (given !== undefined && given !== contentType.split(';')[0] && !(given === 'audio/x-wav' && options.ext === 'wav')) {
    throw new Error(`media: content type ${options.contentType} does not match .${options.ext} (${contentType})`);
  }
  return contentType;
}

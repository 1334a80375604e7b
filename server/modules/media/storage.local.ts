/**
 * Media in a local directory: `<dir>/<first two id characters>/<id>.<ext>` (4,096 subdirectories keep
 * each one small). A file is written under a hidden `.part` name and renamed when complete, so a reader
 * never sees half an object. The file's modification time is its creation time (objects never change),
 * which is all retention needs: no table to keep in step with the files, and a directory shared by
 * several instances (NFS) works the same.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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

const shardPattern = /^[A-Za-z0-9_-]{2}$/;
const partPattern = /^\.[A-Za-z0-9_-]{22}\.[a-z0-9]{1,8}\.part$/;

export class LocalMediaStorage implements MediaStorage {
  readonly kind = 'local';
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  async put(body: MediaBody, options: PutOptions): Promise<StoredMedia> {
    const contentType = checkPutOptions(options);
    const ref: MediaRef = { id: newMediaId(), ext: options.ext };
    const shard = join(this.dir, ref.id.slice(0, 2));
    await mkdir(shard, { recursive: true });
    const part = join(shard, `.${mediaName(ref)}.part`);
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(body instanceof Uint8Array ? Readable.from([body]) : body, count, createWriteStream(part, { flags: 'wx' }));
      await rename(part, this.path(ref));
    } catch (error) {
      await unlink(part).catch(() => undefined);
      throw error;
    }
    return { ...ref, size, contentType };
  }

  async stat(ref: MediaRef): Promise<MediaInfo | null> {
    try {
      const stats = await stat(this.path(ref));
      return this.info(ref, stats.size, stats.mtime);
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async open(ref: MediaRef, range?: ByteRange): Promise<{ info: MediaInfo; body: Readable } | null> {
    let handle;
    try {
      handle = await open(this.path(ref), 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    // Size and bytes from the same open file: a concurrent delete cannot leave us half an answer.
    const stats = await handle.stat().catch(async (error: unknown) => {
      await handle.close();
      throw error;
    });
    const body = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    return { info: this.info(ref, stats.size, stats.mtime), body };
  }

  async delete(ref: MediaRef): Promise<void> {
    await unlink(this.path(ref)).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
  }

  async *listOlderThan(cutoff: Date): AsyncIterable<MediaInfo> {
    for (const shard of await this.shards()) {
      for (const name of await readdirOrEmpty(shard)) {
        const ref = parseMediaName(name);
        if (!ref) continue;
        const stats = await stat(join(shard, name)).catch(() => null);
        if (stats && stats.mtime < cutoff) yield this.info(ref, stats.size, stats.mtime);
      }
    }
  }

  async sweepAbandoned(cutoff: Date): Promise<number> {
    let removed = 0;
    for (const shard of await this.shards()) {
      for (const name of await readdirOrEmpty(shard)) {
        if (!partPattern.test(name)) continue;
        const stats = await stat(join(shard, name)).catch(() => null);
        if (stats && stats.mtime < cutoff && (await unlink(join(shard, name)).then(() => true, () => false))) removed += 1;
      }
    }
    return removed;
  }

  async close(): Promise<void> {}

  /** Only ever built from a parsed ref (22 base64url characters and a known extension): no `..`, no `/`. */
  private path(ref: MediaRef): string {
    return join(this.dir, ref.id.slice(0, 2), mediaName(ref));
  }

  private info(ref: MediaRef, size: number, createdAt: Date): MediaInfo {
    return { id: ref.id, ext: ref.ext, size, contentType: mediaTypes[ref.ext], createdAt };
  }

  private async shards(): Promise<string[]> {
    return (await readdirOrEmpty(this.dir)).filter((name) => shardPattern.test(name)).map((name) => join(this.dir, name));
  }
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

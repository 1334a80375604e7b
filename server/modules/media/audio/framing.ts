/**
 * Audio passed through in whole units — a frame, an Ogg page, a header — each with the samples it plays,
 * read from the format's own headers as the bytes arrive. The relay (`EncodedAudio.relay`) uses it to pass
 * an upstream's bytes on untouched while counting exactly what was delivered, and to stop at the seconds
 * reserved: on a unit boundary (MP3, FLAC), or inside the unit where the format can end there (WAV sample
 * frames; Ogg Opus end trimming through the last page's granule position).
 *
 * Bytes that do not frame as the format they were said to be cannot be counted, so they are never passed
 * on: a stream that has none is `UnreadableAudio`; junk between frames is dropped, within a bound.
 */
export interface AudioUnit {
  bytes: Buffer;
  /** Samples (per channel) it plays: 0 for a header or metadata. */
  samples: number;
  sampleRate: number;
  /** Its first `samples` as the stream's last unit, where the format can end inside a unit; null when none are left. */
  cut?: (samples: number) => Buffer | null;
}

export interface AudioFramer {
  push(bytes: Uint8Array): AudioUnit[];
  /** What is left once the stream has ended (a last frame is known to be whole only then). */
  end(): AudioUnit[];
}

/** Bytes that are not the audio format they were said to be. */
export class UnreadableAudio extends Error {
  override name = 'UnreadableAudio';
}

/** Most bytes skipped in search of the next frame before a stream is declared unreadable. */
export const maxJunkBytes = 64 * 1024;

/** Bytes received and not yet framed. */
export class PendingBytes {
  #bytes: Buffer = Buffer.alloc(0);

  get bytes(): Buffer {
    return this.#bytes;
  }

  get length(): number {
    return this.#bytes.length;
  }

  append(chunk: Uint8Array): void {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#bytes = this.#bytes.length === 0 ? Buffer.from(bytes) : Buffer.concat([this.#bytes, bytes]);
  }

  /** Removes and returns the first `count` bytes (a copy: the caller may keep it). */
  take(count: number): Buffer {
    const taken = Buffer.from(this.#bytes.subarray(0, count));
    this.#bytes = this.#bytes.subarray(count);
    return taken;
  }

  skip(count: number): void {
    this.#bytes = this.#bytes.subarray(count);
  }
}

/** Counts junk skipped since the last good unit, and gives up past `maxJunkBytes`. */
export class JunkBudget {
  #skipped = 0;
  readonly #what: string;

  constructor(what: string) {
    this.#what = what;
  }

  skip(count: number): void {
    this.#skipped += count;
    if (this.#skipped > maxJunkBytes) throw new UnreadableAudio(`no ${this.#what} in ${this.#skipped} bytes`);
  }

  reset(): void {
    this.#skipped = 0;
  }
}

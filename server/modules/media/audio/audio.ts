/**
 * The speech formats (`response_format`: mp3 default, opus, flac, wav, pcm) and the one pipeline every
 * audio response goes through: PCM chunks → resample to 24 kHz mono → encoder → a byte stream that can be
 * piped to the client as it is produced. `transcodeAudio` puts a decoder in front, for an engine or
 * upstream that produced another format than the one asked for, or relays an upstream's bytes untouched
 * when they already are in that format.
 *
 * Either way the audio stops at `maxSeconds` (what was reserved for it): PCM is cut to the sample, relayed
 * bytes at a frame or page (framing.ts). What is delivered never plays longer than that, and `seconds`
 * counts exactly what was delivered.
 */
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { mediaTypes } from '../media.types.ts';
import type { AudioEncoder } from './audio.encoder.ts';
import { FlacEncoder } from './flac.ts';
import type { AudioFormat } from './format.ts';
import { createFramer } from './framers.ts';
import { UnreadableAudio, type AudioUnit } from './framing.ts';
import { Mp3Encoder } from './mp3.ts';
import { OggOpusEncoder } from './opus.ts';
import { downmix, floatToInt16, outputSampleRate, resampled, type PcmChunk } from './pcm.ts';
import { bytesToInt16, int16ToBytes, WavDecoder, WavEncoder } from './wav.ts';

/** The `content-type` of each format, the same one `/v1/media` serves a stored file with. */
export function audioContentType(format: AudioFormat): string {
  return mediaTypes[format];
}

function createEncoder(format: AudioFormat, sampleRate: number): AudioEncoder {
  switch (format) {
    case 'mp3':
      return new Mp3Encoder(sampleRate);
    case 'opus':
      return new OggOpusEncoder(sampleRate);
    case 'flac':
      return new FlacEncoder(sampleRate);
    case 'wav':
      return new WavEncoder(sampleRate);
    case 'pcm':
      return { write: (samples) => [int16ToBytes(samples)], end: () => [] };
  }
}

/** Where audio stops: the seconds reserved for it. */
export interface AudioLimit {
  /** At most this many seconds are delivered; more from the source is cut off (default: no limit). */
  maxSeconds?: number;
}

/**
 * Audio on its way out. `body` is a byte stream (pull-based: nothing is encoded faster than it is read,
 * beyond what the source has already produced); destroying it stops the source (the engine stops
 * synthesising, the upstream body is cancelled). `seconds` is the audio length that has gone through so
 * far, final once `body` has ended: what speech is billed by. `trimmed` says the source had more than
 * `maxSeconds` and was cut off there.
 */
export class EncodedAudio {
  readonly format: AudioFormat;
  readonly contentType: string;
  readonly body: Readable;
  trimmed = false;
  private secondsSoFar = 0;
  private readonly finalizer: ((file: Buffer) => Buffer) | undefined;

  private constructor(format: AudioFormat, bytes: (audio: EncodedAudio) => AsyncGenerator<Buffer>, finalizer?: (file: Buffer) => Buffer) {
    this.format = format;
    this.contentType = audioContentType(format);
    this.finalizer = finalizer;
    this.body = Readable.from(bytes(this), { objectMode: false });
  }

  /** Encodes PCM (any rate; resampled to 24 kHz mono) as `format`, at most `maxSeconds` of it. */
  static fromPcm(pcm: AsyncIterable<PcmChunk>, format: AudioFormat, limit: AudioLimit = {}): EncodedAudio {
    const encoder = createEncoder(format, outputSampleRate);
    const maxSamples = Math.floor((limit.maxSeconds ?? Infinity) * outputSampleRate + 1e-6);
    return new EncodedAudio(
      format,
      async function* (audio) {
        let count = 0;
        try {
          for await (const samples of resampled(pcm, outputSampleRate)) {
            const kept = count + samples.length > maxSamples ? samples.subarray(0, maxSamples - count) : samples;
            count += kept.length;
            audio.secondsSoFar = count / outputSampleRate;
            yield* asBuffers(encoder.write(kept));
            if (kept.length < samples.length) {
              // Leaving the loop ends the source: the engine stops, the upstream body is cancelled.
              audio.trimmed = true;
              break;
            }
          }
          yield* asBuffers(encoder.end());
        } finally {
          encoder.dispose?.();
        }
      },
      encoder.finalize?.bind(encoder),
    );
  }

  /**
   * Passes bytes already in `format` through untouched, a whole frame or page at a time, counting the
   * samples each plays, up to `maxSeconds`. Headers wait for the first audio, so a stream with none is an
   * error before anything was sent. Throws `UnreadableAudio` for bytes that are not `format`.
   */
  static relay(bytes: AsyncIterable<Uint8Array>, format: Exclude<AudioFormat, 'pcm'>, limit: AudioLimit = {}): EncodedAudio {
    const maxSeconds = limit.maxSeconds ?? Infinity;
    return new EncodedAudio(format, async function* (audio) {
      const framer = createFramer(format, maxSeconds);
      const count = new SampleCount();
      /** Bytes ready to go: headers wait here until the first unit that plays. */
      let ready: Buffer[] = [];
      /** Takes the units up to the limit; false once it is reached. */
      const take = (units: AudioUnit[]): boolean => {
        for (const unit of units) {
          const left = unit.samples === 0 ? Infinity : count.left(maxSeconds, unit.sampleRate);
          const kept = unit.samples <= left ? unit.bytes : unit.cut?.(left);
          if (kept) ready.push(kept);
          if (kept && unit.samples > 0) {
            count.add(Math.min(unit.samples, left), unit.sampleRate);
            audio.secondsSoFar = count.seconds;
          }
          if (unit.samples > left) {
            audio.trimmed = true;
            return false;
          }
        }
        return true;
      };
      const send = () => {
        if (audio.secondsSoFar === 0) return [];
        const out = ready;
        ready = [];
        return out;
      };
      let more = true;
      for await (const chunk of bytes) {
        more = take(framer.push(chunk));
        yield* send();
        // Leaving the loop cancels the upstream body.
        if (!more) break;
      }
      if (more) take(framer.end());
      yield* send();
      if (audio.secondsSoFar === 0) throw new UnreadableAudio(`no ${format} audio in what was sent`);
    });
  }

  get seconds(): number {
    return this.secondsSoFar;
  }

  /**
   * Resolves when the first bytes are ready (or the audio ended empty); rejects with the source's error
   * if it failed first. Await it before sending the response headers, so that an engine or upstream
   * that fails at once is still a JSON error and not a cut-off 200.
   */
  async started(): Promise<void> {
    if (this.body.readableLength > 0 || this.body.readableEnded) return;
    if (this.body.errored) throw this.body.errored;
    await once(this.body, 'readable');
  }

  /** The whole file (for storing it or a non-streamed reply), with lengths and checksums filled in. */
  async whole(): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.body) chunks.push(chunk as Buffer);
    const file = Buffer.concat(chunks);
    return this.finalizer ? this.finalizer(file) : file;
  }
}

/** Samples counted in whole numbers at the stream's rate, so that a limit is met exactly, not within float noise. */
class SampleCount {
  #earlier = 0;
  #samples = 0;
  #rate = 0;

  get seconds(): number {
    return this.#earlier + (this.#rate === 0 ? 0 : this.#samples / this.#rate);
  }

  /** Samples at `rate` that still fit within `maxSeconds`. */
  left(maxSeconds: number, rate: number): number {
    return Math.max(0, Math.floor((maxSeconds - this.seconds) * rate + 1e-6));
  }

  add(samples: number, rate: number): void {
    if (rate !== this.#rate) {
      this.#earlier = this.seconds;
      this.#samples = 0;
      this.#rate = rate;
    }
    this.#samples += samples;
  }
}

function* asBuffers(chunks: Uint8Array[]): Generator<Buffer> {
  for (const bytes of chunks) if (bytes.length > 0) yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Audio an engine or upstream produced as `from`, delivered as `to`, at most `limit.maxSeconds` of it:
 * re-encoded when they differ, passed through (and counted frame by frame) when they are the same. `pcm`
 * input is 16-bit mono at `pcmSampleRate` (OpenAI's 24 kHz unless said otherwise).
 */
export function transcodeAudio(bytes: AsyncIterable<Uint8Array>, from: AudioFormat, to: AudioFormat, limit: AudioLimit = {}, pcmSampleRate = outputSampleRate): EncodedAudio {
  if (from === to && from !== 'pcm') return EncodedAudio.relay(bytes, from, limit);
  return EncodedAudio.fromPcm(decodeAudio(bytes, from, pcmSampleRate), to, limit);
}

/** Decodes a byte stream in `from` to PCM chunks, as the bytes arrive. */
export async function* decodeAudio(bytes: AsyncIterable<Uint8Array>, from: AudioFormat, pcmSampleRate = outputSampleRate): AsyncIterable<PcmChunk> {
  const decoder = await createDecoder(from, pcmSampleRate);
  try {
    for await (const chunk of bytes) yield* await decoder.push(chunk);
    yield* await decoder.end();
  } finally {
    decoder.free();
  }
}

interface AudioDecoder {
  push(bytes: Uint8Array): Promise<PcmChunk[]>;
  end(): Promise<PcmChunk[]>;
  free(): void;
}

type WasmDecoded = { channelData: Float32Array[]; samplesDecoded: number; sampleRate: number; errors: { message: string }[] };
interface WasmDecoder {
  ready: Promise<void>;
  decode(data: Uint8Array): WasmDecoded | Promise<WasmDecoded>;
  flush?(): Promise<WasmDecoded>;
  free(): void;
}

async function createDecoder(format: AudioFormat, pcmSampleRate: number): Promise<AudioDecoder> {
  switch (format) {
    case 'pcm': {
      let odd: Uint8Array = new Uint8Array(0);
      return {
        push: async (chunk) => {
          const joined = concat(odd, chunk);
          const even = joined.length - (joined.length % 2);
          odd = joined.slice(even);
          return even > 0 ? [{ samples: bytesToInt16(joined.subarray(0, even)), sampleRate: pcmSampleRate }] : [];
        },
        end: async () => [],
        free: () => undefined,
      };
    }
    case 'wav': {
      const decoder = new WavDecoder();
      return {
        push: async (chunk) => {
          const samples = decoder.push(chunk);
          return samples.length > 0 ? [{ samples, sampleRate: decoder.format!.sampleRate }] : [];
        },
        end: async () => [],
        free: () => undefined,
      };
    }
    case 'mp3':
    case 'flac':
    case 'opus': {
      // The WebAssembly decoders load at the first transcode, not with the server.
      const decoder: WasmDecoder =
        format === 'mp3'
          ? new (await import('mpg123-decoder')).MPEGDecoder()
          : format === 'flac'
            ? new (await import('@wasm-audio-decoders/flac')).FLACDecoder()
            : new (await import('ogg-opus-decoder')).OggOpusDecoder();
      await decoder.ready;
      const toChunks = (decoded: WasmDecoded): PcmChunk[] => {
        if (decoded.samplesDecoded === 0 && decoded.errors.length > 0) throw new Error(`cannot decode ${format}: ${decoded.errors[0]!.message}`);
        if (decoded.samplesDecoded === 0) return [];
        return [{ samples: floatToInt16(downmix(decoded.channelData, decoded.samplesDecoded)), sampleRate: decoded.sampleRate }];
      };
      return {
        push: async (chunk) => toChunks(await decoder.decode(chunk)),
        end: async () => (decoder.flush ? toChunks(await decoder.flush()) : []),
        free: () => decoder.free(),
      };
    }
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

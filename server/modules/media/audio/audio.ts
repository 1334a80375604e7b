/**
 * The speech formats (`response_format`: mp3 default, opus, flac, wav, pcm) and the one pipeline every
 * audio response goes through: PCM chunks → resample to 24 kHz mono → encoder → a byte stream that can be
 * piped to the client as it is produced. `transcodeAudio` puts a decoder in front, for an engine or
 * upstream that produced another format than the one asked for.
 */
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { mediaTypes } from '../media.types.ts';
import type { AudioEncoder } from './audio.encoder.ts';
import { FlacEncoder } from './flac.ts';
import { Mp3Encoder } from './mp3.ts';
import { OggOpusEncoder } from './opus.ts';
import { downmix, floatToInt16, outputSampleRate, resampled, type PcmChunk } from './pcm.ts';
import { bytesToInt16, int16ToBytes, WavDecoder, WavEncoder } from './wav.ts';

export const audioFormats = ['mp3', 'opus', 'flac', 'wav', 'pcm'] as const;
export type AudioFormat = (typeof audioFormats)[number];

export function isAudioFormat(value: string): value is AudioFormat {
  return (audioFormats as readonly string[]).includes(value);
}

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

/**
 * Audio on its way out. `body` is a byte stream (pull-based: nothing is encoded faster than it is read,
 * beyond what the source has already produced); destroying it stops the source (the engine stops
 * synthesising, the upstream body is cancelled). `seconds` is the audio length that has gone through so
 * far, final once `body` has ended: what speech is billed by.
 */
export class EncodedAudio {
  readonly format: AudioFormat;
  readonly contentType: string;
  readonly body: Readable;
  /** Set when a relayed stream could not be decoded to measure it (its bytes were still passed on). */
  measureError: Error | null = null;
  private secondsSoFar = 0;
  private readonly finalizer: ((file: Buffer) => Buffer) | undefined;

  private constructor(format: AudioFormat, bytes: (audio: EncodedAudio) => AsyncGenerator<Buffer>, finalizer?: (file: Buffer) => Buffer) {
    this.format = format;
    this.contentType = audioContentType(format);
    this.finalizer = finalizer;
    this.body = Readable.from(bytes(this), { objectMode: false });
  }

  /** Encodes PCM (any rate; resampled to 24 kHz mono) as `format`. */
  static fromPcm(pcm: AsyncIterable<PcmChunk>, format: AudioFormat): EncodedAudio {
    const encoder = createEncoder(format, outputSampleRate);
    return new EncodedAudio(
      format,
      async function* (audio) {
        try {
          for await (const samples of resampled(pcm, outputSampleRate)) {
            audio.secondsSoFar += samples.length / outputSampleRate;
            yield* asBuffers(encoder.write(samples));
          }
          yield* asBuffers(encoder.end());
        } finally {
          encoder.dispose?.();
        }
      },
      encoder.finalize?.bind(encoder),
    );
  }

  /** Passes bytes already in `format` through untouched, decoding a copy alongside to measure their length. */
  static relay(bytes: AsyncIterable<Uint8Array>, format: AudioFormat, pcmSampleRate = outputSampleRate): EncodedAudio {
    return new EncodedAudio(format, async function* (audio) {
      const decoder = await createDecoder(format, pcmSampleRate);
      const measure = async (decode: () => Promise<PcmChunk[]>) => {
        if (audio.measureError) return;
        try {
          for (const chunk of await decode()) audio.secondsSoFar += chunk.samples.length / chunk.sampleRate;
        } catch (error) {
          audio.measureError = error as Error;
        }
      };
      try {
        for await (const chunk of bytes) {
          await measure(() => decoder.push(chunk));
          yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        }
        await measure(() => decoder.end());
      } finally {
        decoder.free();
      }
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

function* asBuffers(chunks: Uint8Array[]): Generator<Buffer> {
  for (const bytes of chunks) if (bytes.length > 0) yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function encodeAudio(pcm: AsyncIterable<PcmChunk>, format: AudioFormat): EncodedAudio {
  return EncodedAudio.fromPcm(pcm, format);
}

/**
 * Audio an engine or upstream produced as `from`, delivered as `to`: re-encoded when they differ, passed
 * through (and measured) when they are the same. `pcm` input is 16-bit mono at `pcmSampleRate`
 * (OpenAI's 24 kHz unless said otherwise).
 */
export function transcodeAudio(bytes: AsyncIterable<Uint8Array>, from: AudioFormat, to: AudioFormat, pcmSampleRate = outputSampleRate): EncodedAudio {
  if (from === to && from !== 'pcm') return EncodedAudio.relay(bytes, from);
  return EncodedAudio.fromPcm(decodeAudio(bytes, from, pcmSampleRate), to);
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

/**
 * WAV (RIFF, PCM 16-bit mono). A stream cannot know its length when it starts, so the streamed header
 * carries 0xFFFFFFFF sizes, which players read as "until the end" (what OpenAI's streamed WAV does too);
 * `finalize` writes the real sizes once the whole file is in hand (stored files, buffered responses).
 * The reader side turns any PCM WAV (16/24/32-bit integer or 32-bit float, any channel count) into
 * mono 16-bit, for upstreams that answer WAV when another format was asked for.
 */
import type { AudioEncoder } from './audio.encoder.ts';
import { downmix, floatToInt16 } from './pcm.ts';

const unknownSize = 0xffffffff;

export function wavHeader(sampleRate: number, dataBytes: number | null): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(dataBytes === null ? unknownSize : 36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes === null ? unknownSize : dataBytes, 40);
  return header;
}

export class WavEncoder implements AudioEncoder {
  private started = false;
  private readonly sampleRate: number;

  constructor(sampleRate: number) {
    this.sampleRate = sampleRate;
  }

  write(samples: Int16Array): Uint8Array[] {
    const body = int16ToBytes(samples);
    if (this.started) return [body];
    this.started = true;
    return [wavHeader(this.sampleRate, null), body];
  }

  end(): Uint8Array[] {
    return this.started ? [] : this.write(new Int16Array(0));
  }

  finalize(file: Buffer): Buffer {
    const dataBytes = file.length - 44;
    file.writeUInt32LE(36 + dataBytes, 4);
    file.writeUInt32LE(dataBytes, 40);
    return file;
  }
}

export function int16ToBytes(samples: Int16Array): Buffer {
  const bytes = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2);
  return bytes;
}

export function bytesToInt16(bytes: Uint8Array): Int16Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int16Array(Math.floor(bytes.byteLength / 2));
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

export interface WavFormat {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  float: boolean;
}

/** Streaming WAV reader: feed bytes, get mono 16-bit samples. Throws on what is not PCM WAV. */
export class WavDecoder {
  format: WavFormat | null = null;
  private pending = Buffer.alloc(0);
  private inData = false;

  push(chunk: Uint8Array): Int16Array {
    this.pending = Buffer.concat([this.pending, chunk]);
    if (!this.inData && !this.readHeader()) return new Int16Array(0);
    const format = this.format!;
    const frameBytes = (format.bitsPerSample / 8) * format.channels;
    const frames = Math.floor(this.pending.length / frameBytes);
    const usable = this.pending.subarray(0, frames * frameBytes);
    this.pending = Buffer.from(this.pending.subarray(frames * frameBytes));
    return decodeFrames(usable, frames, format);
  }

  /** Walks the chunks up to `data`; false while the header is still incomplete. */
  private readHeader(): boolean {
    const bytes = this.pending;
    if (bytes.length < 12) return false;
    if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
    let offset = 12;
    while (offset + 8 <= bytes.length) {
      const id = bytes.toString('ascii', offset, offset + 4);
      const size = bytes.readUInt32LE(offset + 4);
      if (id === 'data') {
        if (!this.format) throw new Error('WAV data before its fmt chunk');
        this.pending = Buffer.from(bytes.subarray(offset + 8));
        this.inData = true;
        return true;
      }
      if (offset + 8 + size > bytes.length) return false;
      if (id === 'fmt ') this.format = parseFmt(bytes.subarray(offset + 8, offset + 8 + size));
      offset += 8 + size + (size % 2);
    }
    return false;
  }
}

export function parseFmt(fmt: Buffer): WavFormat {
  let tag = fmt.readUInt16LE(0);
  const channels = fmt.readUInt16LE(2);
  const sampleRate = fmt.readUInt32LE(4);
  const bitsPerSample = fmt.readUInt16LE(14);
  if (tag === 0xfffe && fmt.length >= 26) tag = fmt.readUInt16LE(24); // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts with the tag
  const float = tag === 3;
  const supported = (tag === 1 && [16, 24, 32].includes(bitsPerSample)) || (float && bitsPerSample === 32);
  if (!supported || channels < 1 || sampleRate < 1) throw new Error(`unsupported WAV encoding (format ${tag}, ${bitsPerSample}-bit)`);
  return { sampleRate, channels, bitsPerSample, float };
}

function decodeFrames(bytes: Buffer, frames: number, format: WavFormat): Int16Array {
  const width = format.bitsPerSample / 8;
  const channels: Float32Array[] = Array.from({ length: format.channels }, () => new Float32Array(frames));
  for (let frame = 0; frame < frames; frame++) {
    for (let channel = 0; channel < format.channels; channel++) {
      const at = (frame * format.channels + channel) * width;
      channels[channel]![frame] = format.float
        ? bytes.readFloatLE(at)
        : width === 2
          ? bytes.readInt16LE(at) / 32768
          : width === 3
            ? bytes.readIntLE(at, 3) / 8_388_608
            : bytes.readInt32LE(at) / 2_147_483_648;
    }
  }
  return floatToInt16(downmix(channels, frames));
}

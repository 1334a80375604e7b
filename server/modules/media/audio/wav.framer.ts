/**
 * WAV relayed in sample frames: the header (everything up to the contents of the `data` chunk) as one
 * unit, then the whole sample frames that have arrived, then any chunks after the data (metadata, no
 * samples). It can end after any sample frame. A header that announces more data than `maxSeconds` is
 * corrected to that length: what the relay will deliver when it stops there.
 */
import { PendingBytes, UnreadableAudio, type AudioFramer, type AudioUnit } from './framing.ts';
import { parseFmt, type WavFormat } from './wav.ts';

const maxHeaderBytes = 1024 * 1024;
/** The data size a stream writes when it cannot know it; 0 is seen too. */
const unknownSize = 0xffffffff;

export class WavFramer implements AudioFramer {
  readonly #maxSeconds: number;
  readonly #pending = new PendingBytes();
  #format: WavFormat | null = null;
  #frameBytes = 0;
  #inData = false;
  /** Bytes of the data chunk still to come: Infinity when the header did not say. */
  #dataLeft = Infinity;

  constructor(maxSeconds: number) {
    this.#maxSeconds = maxSeconds;
  }

  push(chunk: Uint8Array): AudioUnit[] {
    this.#pending.append(chunk);
    const units: AudioUnit[] = [];
    if (!this.#inData) {
      const header = this.#header();
      if (!header) return units;
      units.push(header);
    }
    const frames = this.#frames();
    if (frames) units.push(frames);
    if (this.#dataLeft === 0 && this.#pending.length > 0) units.push({ bytes: this.#pending.take(this.#pending.length), samples: 0, sampleRate: this.#format!.sampleRate });
    return units;
  }

  end(): AudioUnit[] {
    if (!this.#inData) throw new UnreadableAudio(this.#pending.length === 0 ? 'no WAV data' : 'a WAV file cut short before its data chunk');
    // A partial sample frame at the very end plays nothing.
    return [];
  }

  #header(): AudioUnit | null {
    const bytes = this.#pending.bytes;
    if (bytes.length < 12) return null;
    if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') throw new UnreadableAudio('not a WAV file');
    for (let offset = 12; offset + 8 <= bytes.length; ) {
      const id = bytes.toString('ascii', offset, offset + 4);
      const size = bytes.readUInt32LE(offset + 4);
      if (id === 'data') return this.#dataStarts(offset, size);
      if (offset + 8 + size > bytes.length) break;
      if (id === 'fmt ') this.#readFormat(bytes.subarray(offset + 8, offset + 8 + size));
      offset += 8 + size + (size % 2);
    }
    if (bytes.length > maxHeaderBytes) throw new UnreadableAudio('no WAV data chunk in the first MiB');
    return null;
  }

  #readFormat(fmt: Buffer): void {
    try {
      this.#format = parseFmt(fmt);
    } catch (error) {
      throw new UnreadableAudio((error as Error).message);
    }
    this.#frameBytes = (this.#format.bitsPerSample / 8) * this.#format.channels;
  }

  #dataStarts(offset: number, size: number): AudioUnit {
    const format = this.#format;
    if (!format) throw new UnreadableAudio('WAV data before its fmt chunk');
    const header = this.#pending.take(offset + 8);
    this.#inData = true;
    this.#dataLeft = size === 0 || size === unknownSize ? Infinity : size;
    const limit = Math.floor(this.#maxSeconds * format.sampleRate + 1e-6) * this.#frameBytes;
    if (this.#dataLeft !== Infinity && this.#dataLeft > limit) {
      header.writeUInt32LE(limit, offset + 4);
      header.writeUInt32LE(Math.max(0, header.readUInt32LE(4) - (this.#dataLeft - limit)), 4);
    }
    return { bytes: header, samples: 0, sampleRate: format.sampleRate };
  }

  #frames(): AudioUnit | null {
    const count = Math.floor(Math.min(this.#pending.length, this.#dataLeft) / this.#frameBytes);
    if (count === 0) return null;
    const bytes = this.#pending.take(count * this.#frameBytes);
    this.#dataLeft -= bytes.length;
    const frameBytes = this.#frameBytes;
    return { bytes, samples: count, sampleRate: this.#format!.sampleRate, cut: (samples) => (samples > 0 ? bytes.subarray(0, samples * frameBytes) : null) };
  }
}

/**
 * MP3 through lamejs (LAME in pure JavaScript): MPEG-2 Layer III at 24 kHz mono, constant 96 kbit/s.
 * Frames come out as soon as 576 samples are in, so it streams.
 */
import { Mp3Encoder as Lame } from '@breezystack/lamejs';
import type { AudioEncoder } from './audio.encoder.ts';

export class Mp3Encoder implements AudioEncoder {
  private readonly lame: Lame;

  constructor(sampleRate: number, kbps = 96) {
    this.lame = new Lame(1, sampleRate, kbps);
  }

  write(samples: Int16Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    // lamejs sizes its buffer for up to 1152 × N samples per call; feed it in modest slices.
    for (let offset = 0; offset < samples.length; offset += 1152 * 8) {
      const bytes = this.lame.encodeBuffer(samples.subarray(offset, offset + 1152 * 8));
      if (bytes.length > 0) out.push(Uint8Array.from(bytes));
    }
    return out;
  }

  end(): Uint8Array[] {
    const bytes = this.lame.flush();
    return bytes.length > 0 ? [Uint8Array.from(bytes)] : [];
  }
}

/**
 * MP3 (MPEG-1, -2 and 2.5, Layers I–III) relayed frame by frame. Each frame header gives its length and
 * its samples (1152, or 576 for Layer III at the MPEG-2 rates; 384 for Layer I). An ID3v2 tag at the
 * start is one unit without samples; a Xing/Info/VBRI header frame plays nothing (decoders skip it).
 * A header counts only if the next frame's header (or a trailing tag) follows where it says — the last
 * frame: if it follows the one before in step — so stray 0xFFE bytes in junk are not taken for audio.
 */
import { JunkBudget, PendingBytes, type AudioFramer, type AudioUnit } from './framing.ts';

/** kbit/s by bitrate index: MPEG-1 Layers I, II, III; MPEG-2/2.5 Layer I, then Layers II and III. */
const bitrates = {
  v1: [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  ],
  v2: [
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ],
};
/** Hz by version bits (00: MPEG-2.5, 10: MPEG-2, 11: MPEG-1) and rate index. */
const sampleRates: Record<number, number[]> = { 0: [11025, 12000, 8000], 2: [22050, 24000, 16000], 3: [44100, 48000, 32000] };

interface FrameHeader {
  length: number;
  samples: number;
  sampleRate: number;
}

/** The frame header at `at`, or null when there is none (or not all four bytes are in). */
export function mpegFrameHeader(bytes: Buffer, at: number): FrameHeader | null {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return null;
  const version = (bytes[at + 1]! >> 3) & 0b11;
  const layer = 4 - ((bytes[at + 1]! >> 1) & 0b11);
  const bitrateIndex = bytes[at + 2]! >> 4;
  const rateIndex = (bytes[at + 2]! >> 2) & 0b11;
  const padding = (bytes[at + 2]! >> 1) & 1;
  if (version === 1 || layer === 4 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const mpeg1 = version === 3;
  const kbps = mpeg1 ? bitrates.v1[layer - 1]![bitrateIndex]! : bitrates.v2[layer === 1 ? 0 : 1]![bitrateIndex]!;
  const sampleRate = sampleRates[version]![rateIndex]!;
  const samples = layer === 1 ? 384 : layer === 3 && !mpeg1 ? 576 : 1152;
  const length = layer === 1 ? (Math.floor((12_000 * kbps) / sampleRate) + padding) * 4 : Math.floor((samples * 125 * kbps) / sampleRate) + padding;
  return { length, samples, sampleRate };
}

export class Mp3Framer implements AudioFramer {
  readonly #pending = new PendingBytes();
  readonly #junk = new JunkBudget('MPEG audio frame');
  #atStart = true;
  /** The pending bytes start where the stream, its tag or the last frame ended: no junk since. */
  #inStep = true;
  #frames = 0;

  push(chunk: Uint8Array): AudioUnit[] {
    this.#pending.append(chunk);
    return this.#units(false);
  }

  end(): AudioUnit[] {
    // Whatever is left after the last whole frame (an ID3v1 tag, a cut-off frame) plays nothing.
    return this.#units(true);
  }

  #units(final: boolean): AudioUnit[] {
    const units: AudioUnit[] = [];
    for (;;) {
      const bytes = this.#pending.bytes;
      if (this.#atStart) {
        if (bytes.length < 10 && !final) break;
        this.#atStart = false;
        const tag = id3v2Length(bytes);
        if (tag !== null) {
          if (bytes.length < tag && !final) {
            this.#atStart = true;
            break;
          }
          units.push({ bytes: this.#pending.take(tag), samples: 0, sampleRate: 0 });
          continue;
        }
      }
      const header = mpegFrameHeader(bytes, 0);
      if (!header) {
        if (bytes.length < 4 && !final) break;
        if (bytes.length === 0) break;
        this.#loseStep(bytes);
        continue;
      }
      // A header is trusted when the next one is where it says (at the very end: when it follows the last frame in step).
      if (bytes.length < header.length + 4) {
        if (!final) break;
        if (bytes.length < header.length || !this.#inStep) {
          this.#pending.skip(bytes.length);
          break;
        }
      } else if (mpegFrameHeader(bytes, header.length)?.sampleRate !== header.sampleRate && !trailingTag(bytes, header.length)) {
        this.#loseStep(bytes);
        continue;
      }
      const frame = this.#pending.take(header.length);
      const silent = this.#frames++ === 0 && isVbrHeader(frame);
      units.push({ bytes: frame, samples: silent ? 0 : header.samples, sampleRate: header.sampleRate });
      this.#inStep = true;
      this.#junk.reset();
    }
    return units;
  }

  /** Drops bytes up to the next possible frame sync. */
  #loseStep(bytes: Buffer): void {
    this.#inStep = false;
    const next = bytes.indexOf(0xff, 1);
    const skipped = next === -1 ? bytes.length : next;
    this.#pending.skip(skipped);
    this.#junk.skip(skipped);
  }
}

/** The length of an ID3v2 tag at the start of `bytes`, header and footer included; null when there is none. */
function id3v2Length(bytes: Buffer): number | null {
  if (bytes.length < 10 || bytes.toString('latin1', 0, 3) !== 'ID3') return null;
  const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
  return 10 + size + (bytes[5]! & 0x10 ? 10 : 0);
}

/** A tag that follows the last frame: ID3v1 (`TAG`), an appended ID3v2, APE (`APETAGEX`). */
function trailingTag(bytes: Buffer, at: number): boolean {
  const head = bytes.toString('latin1', at, at + 4);
  return head.startsWith('TAG') || head.startsWith('ID3') || head === 'APET';
}

/** A Xing/Info (LAME) or VBRI header frame: it carries the stream's length and table of contents, no sound. */
function isVbrHeader(frame: Buffer): boolean {
  const head = frame.subarray(4, 4 + 2 + 32 + 4).toString('latin1');
  return head.includes('Xing') || head.includes('Info') || frame.toString('latin1', 36, 40) === 'VBRI';
}

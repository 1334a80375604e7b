/**
 * FLAC (RFC 9639) relayed frame by frame. The metadata blocks ("fLaC", STREAMINFO, …) go out as one unit;
 * a STREAMINFO that announces more than `maxSeconds` gets its length and MD5 set to "unknown" (both
 * allowed by the format), since the relay stops short of them. A frame header gives the frame's samples
 * but not its length, so a frame is known to be whole when a valid frame header follows it and its own
 * CRC-16 checks — or the stream ends and it checks — as libFLAC finds frames.
 */
import { crc16, crc8 } from './flac.ts';
import { JunkBudget, PendingBytes, UnreadableAudio, type AudioFramer, type AudioUnit } from './framing.ts';

const maxMetadataBytes = 16 * 1024 * 1024;
/** Far above the largest real frame (65,535 samples × 8 channels × 32 bits ≈ 2 MiB, verbatim). */
const maxFrameBytes = 4 * 1024 * 1024;
const codedRates = [0, 88_200, 176_400, 192_000, 8000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 96_000];

interface FlacFrameHeader {
  samples: number;
  sampleRate: number;
  /** 0: fixed block size, 1: variable; the same throughout a stream. */
  blocking: number;
}

export class FlacFramer implements AudioFramer {
  readonly #maxSeconds: number;
  readonly #pending = new PendingBytes();
  readonly #junk = new JunkBudget('FLAC frame');
  #metadataDone = false;
  #streamRate = 0;
  /** The header of the frame the pending bytes start with, once read. */
  #frame: FlacFrameHeader | null = null;
  /** Where the search for the frame's end resumes, in the pending bytes. */
  #searchFrom = 0;

  constructor(maxSeconds: number) {
    this.#maxSeconds = maxSeconds;
  }

  push(chunk: Uint8Array): AudioUnit[] {
    this.#pending.append(chunk);
    return this.#units(false);
  }

  end(): AudioUnit[] {
    return this.#units(true);
  }

  #units(final: boolean): AudioUnit[] {
    const units: AudioUnit[] = [];
    if (!this.#metadataDone) {
      const metadata = this.#metadata(final);
      if (!metadata) return units;
      units.push(metadata);
    }
    for (;;) {
      const bytes = this.#pending.bytes;
      if (!this.#frame && !this.#frameStarts(bytes, final)) break;
      const end = this.#frameEnd(bytes, final);
      if (end === null) {
        if (bytes.length > maxFrameBytes) throw new UnreadableAudio(`a FLAC frame longer than ${maxFrameBytes} bytes`);
        // A frame cut off by the end of the stream plays nothing.
        if (final) this.#pending.skip(bytes.length);
        break;
      }
      units.push({ bytes: this.#pending.take(end), samples: this.#frame!.samples, sampleRate: this.#frame!.sampleRate });
      this.#frame = null;
      this.#junk.reset();
    }
    return units;
  }

  /** Reads the header of the frame at the start of the pending bytes, dropping junk before it; false to wait. */
  #frameStarts(bytes: Buffer, final: boolean): boolean {
    for (let at = 0; ; ) {
      const header = at < bytes.length ? flacFrameHeader(bytes, at, this.#streamRate) : 'short';
      if (header === 'short') {
        this.#drop(at);
        if (final) this.#pending.skip(this.#pending.length);
        return false;
      }
      if (header) {
        this.#drop(at);
        this.#frame = header;
        this.#searchFrom = 1;
        return true;
      }
      const next = bytes.indexOf(0xff, at + 1);
      at = next === -1 ? bytes.length : next;
    }
  }

  #drop(count: number): void {
    if (count === 0) return;
    this.#pending.skip(count);
    this.#junk.skip(count);
  }

  /** The length of the frame at the start of `bytes`, once it is known to be whole; null until then. */
  #frameEnd(bytes: Buffer, final: boolean): number | null {
    const frame = this.#frame!;
    for (let at = bytes.indexOf(0xff, this.#searchFrom); at !== -1; at = bytes.indexOf(0xff, at + 1)) {
      const next = flacFrameHeader(bytes, at, this.#streamRate);
      if (next === 'short') {
        this.#searchFrom = at;
        return null;
      }
      if (next && next.blocking === frame.blocking && at >= 4 && crc16(bytes.subarray(0, at - 2)) === bytes.readUInt16BE(at - 2)) return at;
    }
    this.#searchFrom = Math.max(1, bytes.length);
    if (final && bytes.length >= 4 && crc16(bytes.subarray(0, bytes.length - 2)) === bytes.readUInt16BE(bytes.length - 2)) return bytes.length;
    return null;
  }

  #metadata(final: boolean): AudioUnit | null {
    const bytes = this.#pending.bytes;
    if (bytes.length >= 4 && bytes.toString('latin1', 0, 4) !== 'fLaC') throw new UnreadableAudio('not a FLAC stream (it does not start with "fLaC")');
    for (let offset = 4; offset + 4 <= bytes.length; ) {
      const last = (bytes[offset]! & 0x80) !== 0;
      const type = bytes[offset]! & 0x7f;
      const blockEnd = offset + 4 + bytes.readUIntBE(offset + 1, 3);
      if (blockEnd > bytes.length) break;
      if (type === 0) this.#streamInfo(bytes.subarray(offset + 4, blockEnd));
      offset = blockEnd;
      if (!last) continue;
      if (!this.#streamRate) throw new UnreadableAudio('a FLAC stream without STREAMINFO');
      this.#metadataDone = true;
      return { bytes: this.#pending.take(offset), samples: 0, sampleRate: this.#streamRate };
    }
    if (bytes.length > maxMetadataBytes) throw new UnreadableAudio(`FLAC metadata longer than ${maxMetadataBytes} bytes`);
    if (final) throw new UnreadableAudio(bytes.length === 0 ? 'no FLAC data' : 'a FLAC stream cut short in its metadata');
    return null;
  }

  /** Reads the sample rate; marks the length and MD5 unknown when the stream will be cut short of them. */
  #streamInfo(info: Buffer): void {
    if (info.length < 34) throw new UnreadableAudio('a FLAC STREAMINFO block shorter than 34 bytes');
    this.#streamRate = (info[10]! << 12) | (info[11]! << 4) | (info[12]! >> 4);
    const total = (info[13]! & 0x0f) * 2 ** 32 + info.readUInt32BE(14);
    if (total > Math.floor(this.#maxSeconds * this.#streamRate + 1e-6)) {
      info[13] = info[13]! & 0xf0;
      info.writeUInt32BE(0, 14);
      info.fill(0, 18, 34);
    }
  }
}

/** The frame header at `at`: null when there is none, `short` when more bytes are needed to tell. */
function flacFrameHeader(bytes: Buffer, at: number, streamRate: number): FlacFrameHeader | null | 'short' {
  if (at + 2 <= bytes.length && (bytes[at] !== 0xff || (bytes[at + 1]! & 0xfe) !== 0xf8)) return null;
  if (at + 5 > bytes.length) return 'short';
  const sizeCode = bytes[at + 2]! >> 4;
  const rateCode = bytes[at + 2]! & 0x0f;
  const depthCode = (bytes[at + 3]! >> 1) & 0b111;
  if (sizeCode === 0 || rateCode === 15 || bytes[at + 3]! >> 4 > 10 || depthCode === 3 || (bytes[at + 3]! & 1) !== 0) return null;
  // The frame or sample number, coded like UTF-8 in up to 7 bytes.
  const lead = bytes[at + 4]!;
  const extra = lead < 0x80 ? 0 : lead < 0xc0 ? -1 : lead < 0xe0 ? 1 : lead < 0xf0 ? 2 : lead < 0xf8 ? 3 : lead < 0xfc ? 4 : lead < 0xfe ? 5 : lead === 0xfe ? 6 : -1;
  if (extra < 0) return null;
  const sizeAt = at + 5 + extra;
  const rateAt = sizeAt + (sizeCode === 6 ? 1 : sizeCode === 7 ? 2 : 0);
  const crcAt = rateAt + (rateCode === 12 ? 1 : rateCode === 13 || rateCode === 14 ? 2 : 0);
  if (crcAt >= bytes.length) return 'short';
  for (let i = at + 5; i < sizeAt; i++) if ((bytes[i]! & 0xc0) !== 0x80) return null;
  if (crc8(bytes.subarray(at, crcAt)) !== bytes[crcAt]) return null;
  const samples =
    sizeCode === 1 ? 192 : sizeCode <= 5 ? 576 << (sizeCode - 2) : sizeCode === 6 ? bytes[sizeAt]! + 1 : sizeCode === 7 ? bytes.readUInt16BE(sizeAt) + 1 : 256 << (sizeCode - 8);
  const sampleRate =
    rateCode === 0 ? streamRate : rateCode <= 11 ? codedRates[rateCode]! : rateCode === 12 ? bytes[rateAt]! * 1000 : rateCode === 13 ? bytes.readUInt16BE(rateAt) : bytes.readUInt16BE(rateAt) * 10;
  return sampleRate > 0 ? { samples, sampleRate, blocking: bytes[at + 1]! & 1 } : null;
}

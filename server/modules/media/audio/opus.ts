/**
 * Ogg Opus (RFC 7845): libopus through opusscript (WebAssembly) for the packets, and the Ogg pages
 * (RFC 3533) written here. 20 ms frames at 24 kHz mono, 48 kbit/s; a page goes out every ~200 ms so the
 * stream starts playing early. Granule positions count 48 kHz samples including the pre-skip, and the
 * last page's granule trims the padding of the final frame, so decoders give back the exact length.
 */
import OpusScript from 'opusscript';
import type { AudioEncoder } from './audio.encoder.ts';
import { int16ToBytes } from './wav.ts';

/** libopus' look-ahead at 24 kHz (2.5 ms + 4 ms delay compensation), in 48 kHz samples. */
const preSkip = 312;
const packetsPerPage = 10;

export class OggOpusEncoder implements AudioEncoder {
  private readonly opus: OpusScript;
  private readonly frameSize: number;
  private readonly granuleScale: number;
  private readonly serial = Math.floor(Math.random() * 0xffffffff) >>> 0;
  private readonly sampleRate: number;
  private pending = new Int16Array(0);
  private packets: Uint8Array[] = [];
  private pageSequence = 0;
  private samplesIn = 0;
  private framesOut = 0;
  private headersSent = false;
  private disposed = false;

  constructor(sampleRate: number, bitrate = 48_000) {
    if (![8000, 12000, 16000, 24000, 48000].includes(sampleRate)) throw new Error(`Opus cannot encode ${sampleRate} Hz`);
    this.sampleRate = sampleRate;
    this.opus = new OpusScript(sampleRate as 24000, 1, OpusScript.Application.AUDIO);
    this.opus.setBitrate(bitrate);
    this.frameSize = sampleRate / 50;
    this.granuleScale = 48_000 / sampleRate;
  }

  write(samples: Int16Array): Uint8Array[] {
    const out = this.headers();
    this.samplesIn += samples.length;
    const all = new Int16Array(this.pending.length + samples.length);
    all.set(this.pending);
    all.set(samples, this.pending.length);
    let offset = 0;
    for (; offset + this.frameSize <= all.length; offset += this.frameSize) this.encodeFrame(all.subarray(offset, offset + this.frameSize));
    this.pending = all.slice(offset);
    // Keep the newest packet back: the last page must carry the end-of-stream flag.
    while (this.packets.length > packetsPerPage) out.push(this.page(this.packets.splice(0, packetsPerPage), false));
    return out;
  }

  end(): Uint8Array[] {
    const out = this.headers();
    // The encoder runs `preSkip` behind: feed that much silence so the input's last samples come out,
    // then pad to whole frames (the last page's granule trims the excess).
    const tail = new Int16Array(this.pending.length + preSkip / this.granuleScale);
    tail.set(this.pending);
    const frames = Math.max(1, Math.ceil(tail.length / this.frameSize));
    const padded = new Int16Array(frames * this.frameSize);
    padded.set(tail);
    for (let offset = 0; offset < padded.length; offset += this.frameSize) this.encodeFrame(padded.subarray(offset, offset + this.frameSize));
    this.pending = new Int16Array(0);
    while (this.packets.length > packetsPerPage) out.push(this.page(this.packets.splice(0, packetsPerPage), false));
    out.push(this.page(this.packets.splice(0), true));
    return out;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.opus.delete();
  }

  private encodeFrame(frame: Int16Array): void {
    this.packets.push(Uint8Array.from(this.opus.encode(int16ToBytes(frame), this.frameSize)));
    this.framesOut += 1;
  }

  private headers(): Uint8Array[] {
    if (this.headersSent) return [];
    this.headersSent = true;
    const head = Buffer.alloc(19);
    head.write('OpusHead', 0, 'ascii');
    head.writeUInt8(1, 8); // version
    head.writeUInt8(1, 9); // channels
    head.writeUInt16LE(preSkip, 10);
    head.writeUInt32LE(this.sampleRate, 12); // original input rate (informational)
    head.writeInt16LE(0, 16); // output gain
    head.writeUInt8(0, 18); // mapping family 0: mono/stereo
    const vendor = Buffer.from('svc (libopus via opusscript)');
    const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
    tags.write('OpusTags', 0, 'ascii');
    tags.writeUInt32LE(vendor.length, 8);
    vendor.copy(tags, 12);
    tags.writeUInt32LE(0, 12 + vendor.length);
    return [this.oggPage([head], 0n, 0x02), this.oggPage([tags], 0n, 0)];
  }

  private page(packets: Uint8Array[], last: boolean): Uint8Array {
    const framesThrough = this.framesOut - this.packets.length;
    // Granule of a page = 48 kHz samples decoded through its last packet (the pre-skip is part of them);
    // on the last page, pre-skip + the real input length, which trims the padding (end trimming).
    const granule = last ? preSkip + this.samplesIn * this.granuleScale : framesThrough * this.frameSize * this.granuleScale;
    return this.oggPage(packets, BigInt(granule), last ? 0x04 : 0);
  }

  private oggPage(packets: Uint8Array[], granule: bigint, flags: number): Uint8Array {
    const lacing: number[] = [];
    for (const packet of packets) {
      for (let left = packet.length; ; left -= 255) {
        lacing.push(Math.min(left, 255));
        if (left < 255) break;
      }
    }
    if (lacing.length > 255) throw new Error('Ogg page overflow');
    const body = Buffer.concat(packets);
    const page = Buffer.alloc(27 + lacing.length + body.length);
    page.write('OggS', 0, 'ascii');
    page.writeUInt8(0, 4);
    page.writeUInt8(flags, 5);
    page.writeBigUInt64LE(granule, 6);
    page.writeUInt32LE(this.serial, 14);
    page.writeUInt32LE(this.pageSequence++, 18);
    page.writeUInt32LE(0, 22);
    page.writeUInt8(lacing.length, 26);
    Buffer.from(lacing).copy(page, 27);
    body.copy(page, 27 + lacing.length);
    page.writeUInt32LE(oggCrc(page), 22);
    return page;
  }
}

const crcTable = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, initial value 0. */
export function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ crcTable[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  return crc;
}

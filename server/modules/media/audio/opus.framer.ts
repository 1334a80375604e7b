/**
 * Ogg Opus (RFC 7845) relayed page by page. A page plays the samples of the Opus packets that end on it,
 * counted from each packet's TOC byte (RFC 6716 §3.1) at 48 kHz, less the stream's pre-skip; the last
 * page (end of stream) plays up to its granule position. A page can be made the last one that plays
 * only part of its packets: its granule position says where the decoder stops (end trimming), its flag
 * says the stream ends, and its CRC is recomputed.
 */
import { JunkBudget, PendingBytes, UnreadableAudio, type AudioFramer, type AudioUnit } from './framing.ts';
import { oggCrc } from './opus.ts';

const opusRate = 48_000;
const capture = Buffer.from('OggS', 'latin1');
const flagContinued = 0x01;
const flagFirst = 0x02;
const flagLast = 0x04;

export class OggOpusFramer implements AudioFramer {
  readonly #pending = new PendingBytes();
  readonly #junk = new JunkBudget('Ogg page');
  #serial: number | null = null;
  #preSkip = 0;
  /** Packets completed so far: the first two are the OpusHead and OpusTags headers. */
  #packets = 0;
  /** The first two bytes of a packet that continues on the next page (its TOC, and its frame count for code 3). */
  #carried: number[] = [];
  /** Samples decoded through the last page (TOC count, pre-skip included), and the samples played so far. */
  #decoded = 0;
  #played = 0;
  /** The last page's granule position, where it gave one. */
  #granule: number | null = null;
  #ended = false;

  push(chunk: Uint8Array): AudioUnit[] {
    this.#pending.append(chunk);
    const units: AudioUnit[] = [];
    for (let unit = this.#next(); unit; unit = this.#next()) units.push(unit);
    return units;
  }

  end(): AudioUnit[] {
    // A page cut off by the end of the stream plays nothing.
    if (this.#serial === null) throw new UnreadableAudio(this.#pending.length === 0 ? 'no Ogg data' : 'not an Ogg stream');
    return [];
  }

  #next(): AudioUnit | null {
    for (;;) {
      if (this.#ended) {
        // Anything after the end-of-stream page (a chained stream) is not relayed.
        this.#pending.skip(this.#pending.length);
        return null;
      }
      const bytes = this.#pending.bytes;
      if (bytes.length < 27) return null;
      const length = pageLength(bytes);
      if (length !== null && bytes.length < length) return null;
      if (length !== null && validPage(bytes.subarray(0, length))) {
        this.#junk.reset();
        return this.#page(this.#pending.take(length));
      }
      const next = bytes.indexOf(capture, 1);
      const skipped = next === -1 ? Math.max(1, bytes.length - 3) : next;
      this.#pending.skip(skipped);
      this.#junk.skip(skipped);
    }
  }

  #page(page: Buffer): AudioUnit {
    const serial = page.readUInt32LE(14);
    if (this.#serial === null) {
      if (!(page[5]! & flagFirst) || page.toString('latin1', 27 + page[26]!, 35 + page[26]!) !== 'OpusHead') throw new UnreadableAudio('not an Ogg Opus stream (no OpusHead)');
      this.#serial = serial;
      this.#preSkip = page.readUInt16LE(27 + page[26]! + 10);
    } else if (serial !== this.#serial) {
      throw new UnreadableAudio('an Ogg stream with more than one logical stream');
    }
    const before = { decoded: this.#decoded, played: this.#played, granule: this.#granule ?? this.#decoded };
    const { samples, endsPacket } = this.#readPackets(page);
    this.#decoded += samples;
    let played = Math.max(0, this.#decoded - this.#preSkip);
    const granule = Number(page.readBigInt64LE(6));
    if (granule >= 0) this.#granule = granule;
    if (page[5]! & flagLast) {
      this.#ended = true;
      if (granule >= 0) played = Math.min(played, Math.max(this.#played, granule - this.#preSkip));
    }
    this.#played = played;
    const unit: AudioUnit = { bytes: page, samples: played - before.played, sampleRate: opusRate };
    if (samples > 0 && endsPacket) {
      // Keeping `keep` more samples: the decoder stops at the granule position of that point.
      unit.cut = (keep) => (keep > 0 ? lastPage(page, before.granule + (before.played + keep + this.#preSkip - before.decoded)) : null);
    }
    return unit;
  }

  /** The samples of the audio packets that end on `page`, and whether its last packet ends there. */
  #readPackets(page: Buffer): { samples: number; endsPacket: boolean } {
    const segments = page[26]!;
    let offset = 27 + segments;
    let samples = 0;
    let start = this.#carried.length > 0 && page[5]! & flagContinued ? this.#carried : [];
    for (let i = 0; i < segments; i++) {
      const lacing = page[27 + i]!;
      if (start.length < 2) start = [...start, ...page.subarray(offset, offset + Math.min(lacing, 2 - start.length))];
      offset += lacing;
      if (lacing === 255) continue;
      // Packets 0 and 1 are the OpusHead and OpusTags headers.
      if (this.#packets++ >= 2 && start.length > 0) samples += packetSamples(start[0]!, start[1]);
      start = [];
    }
    this.#carried = start;
    return { samples, endsPacket: segments > 0 && page[27 + segments - 1] !== 255 };
  }
}

/** Samples (48 kHz) of one Opus packet, from its TOC byte and, for code 3, its frame count byte. */
function packetSamples(toc: number, second: number | undefined): number {
  const config = toc >> 3;
  const frame = config < 12 ? [480, 960, 1920, 2880][config & 3]! : config < 16 ? [480, 960][config & 1]! : [120, 240, 480, 960][config & 3]!;
  const code = toc & 3;
  return frame * (code === 0 ? 1 : code === 3 ? (second ?? 0) & 0x3f : 2);
}

/** The length of the page at the start of `bytes` (null: not a page), once its header and segment table are in. */
function pageLength(bytes: Buffer): number | null {
  if (!bytes.subarray(0, 4).equals(capture) || bytes[4] !== 0) return null;
  const segments = bytes[26]!;
  if (bytes.length < 27 + segments) return 27 + segments;
  let length = 27 + segments;
  for (let i = 0; i < segments; i++) length += bytes[27 + i]!;
  return length;
}

function validPage(page: Buffer): boolean {
  if (page.length < 27 + page[26]!) return false;
  const copy = Buffer.from(page);
  copy.writeUInt32LE(0, 22);
  return oggCrc(copy) === page.readUInt32LE(22);
}

/** `page` as the stream's last page, decoding stops at `granule`. */
function lastPage(page: Buffer, granule: number): Buffer {
  const last = Buffer.from(page);
  last[5] = last[5]! | flagLast;
  last.writeBigInt64LE(BigInt(granule), 6);
  last.writeUInt32LE(0, 22);
  last.writeUInt32LE(oggCrc(last), 22);
  return last;
}

/**
 * Audio never plays past the seconds reserved for it (SECURITY: output that can run past what was asked
 * is capped at the reservation; the ledger bills what was delivered). Relayed bytes are cut at a frame
 * or page and counted from the format's own headers; PCM is cut to the sample. Each cut file is checked
 * with independent decoders (mpg123, libopus, libFLAC) for what it really plays.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { describe, expect, it } from 'vitest';
import { EncodedAudio, transcodeAudio } from '../../../server/modules/media/audio/audio.ts';
import type { AudioFormat } from '../../../server/modules/media/audio/format.ts';
import type { AudioEncoder } from '../../../server/modules/media/audio/audio.encoder.ts';
import { FlacEncoder } from '../../../server/modules/media/audio/flac.ts';
import { UnreadableAudio } from '../../../server/modules/media/audio/framing.ts';
import { mpegFrameHeader } from '../../../server/modules/media/audio/mp3.framer.ts';
import { Mp3Encoder } from '../../../server/modules/media/audio/mp3.ts';
import { oggCrc, OggOpusEncoder } from '../../../server/modules/media/audio/opus.ts';
import type { PcmChunk } from '../../../server/modules/media/audio/pcm.ts';
import { int16ToBytes, WavEncoder } from '../../../server/modules/media/audio/wav.ts';

type Relayable = Exclude<AudioFormat, 'pcm'>;

function tone(seconds: number, rate: number): Int16Array {
  return Int16Array.from({ length: Math.round(seconds * rate) }, (_, i) => Math.round(12_000 * Math.sin((2 * Math.PI * 440 * i) / rate)));
}

/** A whole file as an upstream would send it: `format` at its own rate (MPEG-1 MP3 at 44.1 kHz, Opus at 48 kHz). */
function encodeAt(format: Relayable, seconds: number, rate: number): Buffer {
  const encoder: AudioEncoder =
    format === 'mp3' ? new Mp3Encoder(rate) : format === 'flac' ? new FlacEncoder(rate) : format === 'wav' ? new WavEncoder(rate) : new OggOpusEncoder(rate);
  const samples = tone(seconds, rate);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < samples.length; i += 4000) parts.push(...encoder.write(samples.subarray(i, i + 4000)));
  parts.push(...encoder.end());
  const file = Buffer.concat(parts);
  encoder.dispose?.();
  return encoder.finalize ? encoder.finalize(file) : file;
}

async function* bytesOf(buffer: Buffer, size: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < buffer.length; i += size) yield buffer.subarray(i, i + size);
}

/** Seconds a file plays, by a decoder that is not svc's framing. */
async function plays(format: Relayable, file: Buffer): Promise<number> {
  switch (format) {
    case 'mp3': {
      const decoder = new MPEGDecoder();
      await decoder.ready;
      const result = decoder.decode(file);
      decoder.free();
      return result.samplesDecoded / result.sampleRate;
    }
    case 'opus': {
      const decoder = new OggOpusDecoder();
      await decoder.ready;
      const result = await decoder.decodeFile(file);
      decoder.free();
      return result.samplesDecoded / result.sampleRate;
    }
    case 'wav':
      return (file.length - 44) / 2 / file.readUInt32LE(24);
    case 'flac': {
      const decoder = new FLACDecoder();
      await decoder.ready;
      const result = await decoder.decodeFile(file);
      decoder.free();
      return result.samplesDecoded / result.sampleRate;
    }
  }
}

const upstreams: [Relayable, number][] = [
  ['mp3', 44_100],
  ['mp3', 24_000],
  ['opus', 48_000],
  ['flac', 44_100],
  ['wav', 44_100],
];

describe('relayed_audio_never_plays_past_the_reservation', () => {
  it.each(upstreams)('%s at %d Hz: passed through whole within the limit, cut at it beyond', async (format, rate) => {
    const file = encodeAt(format, 6, rate);
    const whole = transcodeAudio(bytesOf(file, 1000), format, format, { maxSeconds: 10 });
    expect((await whole.whole()).equals(file)).toBe(true);
    expect(whole.trimmed).toBe(false);
    expect(whole.seconds).toBeCloseTo(await plays(format, file), 5);

    const limited = transcodeAudio(bytesOf(file, 777), format, format, { maxSeconds: 2.5 });
    const cut = Buffer.concat((await limited.body.toArray()) as Buffer[]);
    expect(limited.trimmed).toBe(true);
    const played = await plays(format, cut);
    // What is counted (and billed) is what a decoder plays; never more than the limit, short of it by at most a frame.
    expect(limited.seconds).toBeCloseTo(played, 5);
    expect(played).toBeLessThanOrEqual(2.5 + 1e-9);
    expect(played).toBeGreaterThan(2.5 - 4096 / rate);
    // Whole frames of the source, as sent (FLAC's STREAMINFO excepted: it no longer announces the source's length).
    if (format === 'mp3') expect(cut.equals(file.subarray(0, cut.length))).toBe(true);
    if (format === 'flac') expect(cut.subarray(42).equals(file.subarray(42, cut.length))).toBe(true);
  });

  it('wav is cut to the sample frame, and its header announces what is delivered', async () => {
    const file = encodeAt('wav', 4, 44_100);
    const limited = transcodeAudio(bytesOf(file, 1001), 'wav', 'wav', { maxSeconds: 1.5 });
    const cut = await limited.whole();
    expect(cut.length).toBe(44 + 66_150 * 2);
    expect(cut.readUInt32LE(40)).toBe(66_150 * 2);
    expect(cut.readUInt32LE(4)).toBe(cut.length - 8);
    expect(cut.subarray(44).equals(file.subarray(44, cut.length))).toBe(true);
    expect(limited.seconds).toBe(1.5);
  });

  it('opus is cut inside its last page: that page ends the stream and its granule position trims it', async () => {
    const file = encodeAt('opus', 5, 48_000);
    const limited = transcodeAudio(bytesOf(file, 4096), 'opus', 'opus', { maxSeconds: 1.234 });
    const cut = await limited.whole();
    expect(await plays('opus', cut)).toBeCloseTo(1.234, 6);
    const lastPage = cut.lastIndexOf('OggS');
    expect(cut[lastPage + 5]! & 0x04).toBe(0x04);
    expect(Number(cut.readBigInt64LE(lastPage + 6))).toBe(312 + Math.round(1.234 * 48_000));
  });

  it('flac announces an unknown length once it is cut short of STREAMINFO’s', async () => {
    const file = encodeAt('flac', 5, 24_000);
    const cut = await transcodeAudio(bytesOf(file, 999), 'flac', 'flac', { maxSeconds: 2 }).whole();
    expect((cut[8 + 13]! & 0x0f) * 2 ** 32 + cut.readUInt32BE(8 + 14)).toBe(0);
    expect(cut.subarray(8 + 18, 8 + 34).equals(Buffer.alloc(16))).toBe(true);
    // A stream within the limit keeps its length and MD5.
    const kept = await transcodeAudio(bytesOf(file, 999), 'flac', 'flac', { maxSeconds: 5 }).whole();
    expect(kept.equals(file)).toBe(true);
  });

  it.runIf(existsSync('/usr/bin/flac'))('libFLAC (the flac tool) reads a cut stream of its own making: stereo, LPC, seek table and tags', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-flac-cut-'));
    const rate = 44_100;
    const samples = tone(4, rate);
    const stereo = new Int16Array(samples.length * 2);
    samples.forEach((sample, i) => ((stereo[2 * i] = sample), (stereo[2 * i + 1] = -sample >> 1)));
    writeFileSync(join(dir, 'in.raw'), int16ToBytes(stereo));
    const encode = spawnSync('/usr/bin/flac', ['--silent', '-8', '--force-raw-format', '--endian=little', '--sign=signed', '--channels=2', '--bps=16', `--sample-rate=${rate}`, '-T', 'TITLE=x', '-o', join(dir, 'in.flac'), join(dir, 'in.raw')]);
    expect(encode.status).toBe(0);
    const file = readFileSync(join(dir, 'in.flac'));
    const limited = transcodeAudio(bytesOf(file, 3001), 'flac', 'flac', { maxSeconds: 1.5 });
    writeFileSync(join(dir, 'cut.flac'), await limited.whole());
    const test = spawnSync('/usr/bin/flac', ['--test', join(dir, 'cut.flac')], { encoding: 'utf8' });
    expect(test.status, test.stderr).toBe(0);
    const tested = Number(/tested (\d+) samples/.exec(test.stderr)?.[1]);
    expect(tested / rate).toBeCloseTo(limited.seconds, 9);
    expect(limited.seconds).toBeLessThanOrEqual(1.5);
    expect(limited.seconds).toBeGreaterThan(1.5 - 4608 / rate);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops reading the source once the limit is reached (the upstream body is cancelled)', async () => {
    const file = encodeAt('mp3', 20, 24_000);
    let pulled = 0;
    let closed = false;
    async function* source(): AsyncIterable<Uint8Array> {
      try {
        for (let i = 0; i < file.length; i += 1000, pulled += 1) yield file.subarray(i, i + 1000);
      } finally {
        closed = true;
      }
    }
    const limited = transcodeAudio(source(), 'mp3', 'mp3', { maxSeconds: 1 });
    await limited.whole();
    expect(closed).toBe(true);
    expect(pulled).toBeLessThan(file.length / 1000 / 10);
  });

  it('MP3 tags and junk are not relayed, and play nothing', async () => {
    const frames = encodeAt('mp3', 2, 44_100);
    const id3v2 = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x14', 'latin1'), Buffer.alloc(20, 0x41)]);
    const junk = Buffer.from('\xff\xfb junk between frames \xff', 'latin1');
    let middle = 0;
    while (middle < 5000) middle += mpegFrameHeader(frames, middle)!.length;
    const id3v1 = Buffer.concat([Buffer.from('TAG', 'latin1'), Buffer.alloc(125, 0x20)]);
    const file = Buffer.concat([id3v2, frames.subarray(0, middle), junk, frames.subarray(middle), id3v1]);
    const relayed = transcodeAudio(bytesOf(file, 500), 'mp3', 'mp3');
    const out = await relayed.whole();
    expect(out.equals(Buffer.concat([id3v2, frames]))).toBe(true);
    expect(relayed.seconds).toBeCloseTo(await plays('mp3', frames), 6);
  });
});

describe('pcm_is_cut_to_the_sample_at_the_reservation', () => {
  it('encodes at most maxSeconds, whatever the source’s rate, and stops the source there', async () => {
    let closed = false;
    async function* source(): AsyncIterable<PcmChunk> {
      try {
        const samples = tone(30, 22_050);
        for (let i = 0; i < samples.length; i += 2205) yield { samples: samples.subarray(i, i + 2205), sampleRate: 22_050 };
      } finally {
        closed = true;
      }
    }
    const audio = EncodedAudio.fromPcm(source(), 'wav', { maxSeconds: 1.25 });
    const file = await audio.whole();
    expect(audio.trimmed).toBe(true);
    expect(audio.seconds).toBe(1.25);
    expect(file.readUInt32LE(40)).toBe(30_000 * 2);
    expect(closed).toBe(true);
  });
});

/** Ogg Opus whose first packet is not OpusHead (as Ogg Vorbis, say), every page's CRC intact. */
function notOpus(): Buffer {
  const file = encodeAt('opus', 1, 48_000);
  const first = Buffer.from(file.subarray(0, file.indexOf('OggS', 4)));
  first.write('OpusHeaX', first.indexOf('OpusHead'), 'latin1');
  first.writeUInt32LE(0, 22);
  first.writeUInt32LE(oggCrc(first), 22);
  return Buffer.concat([first, file.subarray(first.length)]);
}

describe('audio_that_cannot_be_counted_is_never_relayed', () => {
  const raw = int16ToBytes(tone(2, 24_000));
  const cases: [string, Relayable, Buffer][] = [
    ['raw PCM said to be mp3', 'mp3', raw],
    ['raw PCM said to be wav', 'wav', raw],
    ['raw PCM said to be flac', 'flac', raw],
    ['raw PCM said to be opus', 'opus', raw],
    ['an Ogg stream that is not Opus', 'opus', notOpus()],
    ['a WAV header and no data chunk', 'wav', encodeAt('wav', 1, 24_000).subarray(0, 36)],
  ];
  it.each(cases)('%s: an error before any byte is sent', async (_name, format, file) => {
    const audio = transcodeAudio(bytesOf(file, 4096), format, format);
    await expect(audio.started()).rejects.toBeInstanceOf(UnreadableAudio);
    expect(audio.seconds).toBe(0);
  });
});

/**
 * Each speech format: the right magic bytes and header, and decoding it back (with independent WebAssembly
 * decoders: mpg123, libFLAC, libopus) gives the length that went in. Plus streaming (bytes come out before
 * the source has finished), transcoding, and the resampler.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { describe, expect, it } from 'vitest';
import { decodeAudio, EncodedAudio, transcodeAudio } from '../../../server/modules/media/audio/audio.ts';
import { audioFormats, type AudioFormat } from '../../../server/modules/media/audio/format.ts';
import { Resampler, type PcmChunk } from '../../../server/modules/media/audio/pcm.ts';
import { int16ToBytes } from '../../../server/modules/media/audio/wav.ts';

/** A voiced-speech-like test signal: a 140 Hz buzz with harmonics, amplitude-modulated at 4 Hz. */
function signal(seconds: number, rate: number): Int16Array {
  const out = new Int16Array(Math.round(seconds * rate));
  for (let i = 0; i < out.length; i++) {
    const t = i / rate;
    const buzz = Math.sin(2 * Math.PI * 140 * t) + 0.5 * Math.sin(2 * Math.PI * 280 * t) + 0.25 * Math.sin(2 * Math.PI * 1120 * t);
    out[i] = Math.round(9000 * buzz * (0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * t)));
  }
  return out;
}

async function* chunked(samples: Int16Array, rate: number, size = 2205): AsyncIterable<PcmChunk> {
  for (let i = 0; i < samples.length; i += size) yield { samples: samples.slice(i, i + size), sampleRate: rate };
}

async function* bytesOf(buffer: Buffer, size = 4096): AsyncIterable<Uint8Array> {
  for (let i = 0; i < buffer.length; i += size) yield buffer.subarray(i, i + size);
}

/** Seconds of audio in a file, by an independent decoder. */
async function decodedSeconds(format: AudioFormat, file: Buffer): Promise<number> {
  switch (format) {
    case 'pcm':
      return file.length / 2 / 24_000;
    case 'wav':
      return file.readUInt32LE(40) / 2 / file.readUInt32LE(24);
    case 'mp3': {
      const decoder = new MPEGDecoder();
      await decoder.ready;
      const result = decoder.decode(file);
      decoder.free();
      expect(result.errors).toEqual([]);
      return result.samplesDecoded / result.sampleRate;
    }
    case 'flac':
      // STREAMINFO's total samples: what players show as the length. (The WebAssembly FLAC decoder drops
      // a stream's last frame, so it cannot count; `flac -t`, libFLAC itself, checks the file below.)
      return ((file[8 + 13]! & 0x0f) * 2 ** 32 + file.readUInt32BE(8 + 14)) / (file.readUIntBE(8 + 10, 3) >> 4);
    case 'opus': {
      const decoder = new OggOpusDecoder();
      await decoder.ready;
      const result = await decoder.decodeFile(file);
      decoder.free();
      expect(result.errors).toEqual([]);
      return result.samplesDecoded / result.sampleRate;
    }
  }
}

const magic: Record<AudioFormat, (file: Buffer) => void> = {
  mp3: (file) => {
    // An MPEG-2 Layer III frame sync (24 kHz): 0xFFF3.
    expect(file[0]).toBe(0xff);
    expect(file[1]! & 0xe0).toBe(0xe0);
    expect((file[1]! >> 3) & 0b11).toBe(0b10); // MPEG-2
    expect((file[1]! >> 1) & 0b11).toBe(0b01); // Layer III
  },
  opus: (file) => {
    expect(file.toString('ascii', 0, 4)).toBe('OggS');
    expect(file.toString('ascii', 28, 36)).toBe('OpusHead');
    expect(file.readUInt8(37)).toBe(1); // mono
  },
  flac: (file) => {
    expect(file.toString('ascii', 0, 4)).toBe('fLaC');
    expect(file[4]! & 0x7f).toBe(0); // STREAMINFO first
  },
  wav: (file) => {
    expect(file.toString('ascii', 0, 4)).toBe('RIFF');
    expect(file.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(file.readUInt16LE(20)).toBe(1); // PCM
    expect(file.readUInt16LE(22)).toBe(1); // mono
    expect(file.readUInt32LE(24)).toBe(24_000);
    expect(file.readUInt16LE(34)).toBe(16);
    expect(file.readUInt32LE(40)).toBe(file.length - 44);
    expect(file.readUInt32LE(4)).toBe(file.length - 8);
  },
  pcm: (file) => expect(file.length % 2).toBe(0),
};

describe('speech formats', () => {
  it.each(audioFormats)('%s: header, and decodes back to the length that went in', async (format) => {
    const input = signal(1.5, 22_050);
    const audio = EncodedAudio.fromPcm(chunked(input, 22_050), format);
    const file = await audio.whole();
    magic[format](file);
    expect(audio.seconds).toBeCloseTo(1.5, 3);
    const seconds = await decodedSeconds(format, file);
    // MP3 frames are 576 samples and LAME adds its encoder delay; Opus trims exactly (pre-skip, end granule).
    if (format === 'mp3') {
      expect(seconds).toBeGreaterThan(1.5);
      expect(seconds).toBeLessThan(1.6);
    } else {
      expect(seconds).toBeCloseTo(1.5, 4);
    }
  });

  it('flac is lossless, with total samples and the MD5 of the PCM in STREAMINFO', async () => {
    const input = signal(0.7, 24_000);
    input[100] = 32767;
    input[101] = -32768;
    const file = await EncodedAudio.fromPcm(chunked(input, 24_000, 1000), 'flac').whole();
    const decoder = new FLACDecoder();
    await decoder.ready;
    const result = await decoder.decodeFile(file);
    decoder.free();
    // Every frame the decoder returns is bit-exact (it scales by 32767).
    const decoded = Int16Array.from(result.channelData[0]!, (value) => Math.round(value * 32767));
    expect(result.samplesDecoded).toBeGreaterThanOrEqual(input.length - 4096);
    expect(Buffer.from(decoded.buffer).equals(Buffer.from(input.buffer, 0, decoded.length * 2))).toBe(true);
    // STREAMINFO: 36-bit total samples at byte 8+13 (low 4 bits) .. 8+17; MD5 at 8+18.
    const total = (file[8 + 13]! & 0x0f) * 2 ** 32 + file.readUInt32BE(8 + 14);
    expect(total).toBe(input.length);
    expect(file.subarray(8 + 18, 8 + 34).equals(createHash('md5').update(int16ToBytes(input)).digest())).toBe(true);
  });

  it('flac handles silence (constant subframes) and a short last block', async () => {
    const input = new Int16Array(24_000 + 123);
    const file = await EncodedAudio.fromPcm(chunked(input, 24_000), 'flac').whole();
    expect(await decodedSeconds('flac', file)).toBeCloseTo((24_000 + 123) / 24_000, 5);
    expect(file.length).toBeLessThan(200);
  });

  it.runIf(existsSync('/usr/bin/flac'))('libFLAC (the flac tool, where installed) decodes every sample and verifies the MD5', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-flac-'));
    const input = signal(2.3, 24_000);
    writeFileSync(join(dir, 'a.flac'), await EncodedAudio.fromPcm(chunked(input, 24_000), 'flac').whole());
    const test = spawnSync('/usr/bin/flac', ['--test', '--silent', join(dir, 'a.flac')], { encoding: 'utf8' });
    expect(test.status, test.stderr).toBe(0);
    const decode = spawnSync('/usr/bin/flac', ['--decode', '--force-raw-format', '--endian=little', '--sign=signed', '--silent', '-o', join(dir, 'a.raw'), join(dir, 'a.flac')]);
    expect(decode.status).toBe(0);
    expect(readFileSync(join(dir, 'a.raw')).equals(int16ToBytes(input))).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(audioFormats)('%s streams: bytes come out before the source has finished', async (format) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* source(): AsyncIterable<PcmChunk> {
      yield { samples: signal(0.5, 24_000), sampleRate: 24_000 };
      await held;
      yield { samples: signal(0.5, 24_000), sampleRate: 24_000 };
    }
    const audio = EncodedAudio.fromPcm(source(), format);
    const iterator = audio.body[Symbol.asyncIterator]();
    const first = (await iterator.next()).value as Buffer;
    expect(first.length).toBeGreaterThan(0);
    release();
    const rest: Buffer[] = [first];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value as Buffer);
    expect(audio.seconds).toBeCloseTo(1, 3);
    // Streamed WAV says "length unknown" in its header.
    if (format === 'wav') expect(Buffer.concat(rest).readUInt32LE(40)).toBe(0xffffffff);
  });

  it('started() waits for the first bytes, and surfaces a source that fails before any', async () => {
    const ok = EncodedAudio.fromPcm(chunked(signal(0.3, 24_000), 24_000), 'mp3');
    await ok.started();
    expect((await ok.whole())[0]).toBe(0xff);

    async function* broken(): AsyncIterable<PcmChunk> {
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (Date.now() > 0) throw new Error('engine failed');
      yield { samples: new Int16Array(1), sampleRate: 24_000 };
    }
    await expect(EncodedAudio.fromPcm(broken(), 'mp3').started()).rejects.toThrow('engine failed');
  });

  it('destroying the body stops pulling from the source', async () => {
    let pulled = 0;
    let finished = false;
    async function* source(): AsyncIterable<PcmChunk> {
      try {
        for (;;) {
          pulled += 1;
          yield { samples: signal(0.2, 24_000), sampleRate: 24_000 };
        }
      } finally {
        finished = true;
      }
    }
    const audio = EncodedAudio.fromPcm(source(), 'mp3');
    for await (const _chunk of audio.body) break;
    await new Promise((resolve) => setImmediate(resolve));
    expect(finished).toBe(true);
    expect(pulled).toBeLessThan(100);
  });
});

describe('transcoding', () => {
  it('wav from an upstream becomes mp3, and mp3 becomes wav, keeping the length', async () => {
    const wav = await EncodedAudio.fromPcm(chunked(signal(2, 44_100), 44_100), 'wav').whole();
    const mp3 = await transcodeAudio(bytesOf(wav), 'wav', 'mp3').whole();
    magic.mp3(mp3);
    expect(await decodedSeconds('mp3', mp3)).toBeGreaterThan(1.99);
    expect(await decodedSeconds('mp3', mp3)).toBeLessThan(2.1);
    const back = transcodeAudio(bytesOf(mp3, 1000), 'mp3', 'wav');
    const file = await back.whole();
    magic.wav(file);
    expect(back.seconds).toBeGreaterThan(1.99);
    expect(back.seconds).toBeLessThan(2.1);
  });

  it('opus and flac decode too, as do 48 kHz stereo WAV and raw pcm', async () => {
    const opus = await EncodedAudio.fromPcm(chunked(signal(1, 24_000), 24_000), 'opus').whole();
    expect(await transcodeAudio(bytesOf(opus), 'opus', 'pcm').whole()).toHaveLength(24_000 * 2);
    // 5 whole FLAC blocks: the decoder's lost last frame is not in the way.
    const flac = await EncodedAudio.fromPcm(chunked(signal(20_480 / 24_000, 24_000), 24_000), 'flac').whole();
    expect((await transcodeAudio(bytesOf(flac), 'flac', 'pcm').whole()).length).toBeGreaterThanOrEqual(16_384 * 2);

    // Hand-made 48 kHz stereo float WAV, fed in odd-sized pieces.
    const frames = 48_000;
    const header = Buffer.alloc(44);
    header.write('RIFF', 0);
    header.writeUInt32LE(36 + frames * 8, 4);
    header.write('WAVEfmt ', 8);
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(3, 20);
    header.writeUInt16LE(2, 22);
    header.writeUInt32LE(48_000, 24);
    header.writeUInt32LE(48_000 * 8, 28);
    header.writeUInt16LE(8, 32);
    header.writeUInt16LE(32, 34);
    header.write('data', 36);
    header.writeUInt32LE(frames * 8, 40);
    const body = Buffer.alloc(frames * 8);
    for (let i = 0; i < frames; i++) {
      body.writeFloatLE(0.3 * Math.sin((2 * Math.PI * 300 * i) / 48_000), i * 8);
      body.writeFloatLE(0.3 * Math.sin((2 * Math.PI * 300 * i) / 48_000), i * 8 + 4);
    }
    const pcm = await transcodeAudio(bytesOf(Buffer.concat([header, body]), 333), 'wav', 'pcm').whole();
    expect(pcm).toHaveLength(24_000 * 2);

    const raw = int16ToBytes(signal(0.5, 24_000));
    let count = 0;
    for await (const chunk of decodeAudio(bytesOf(raw, 1001), 'pcm')) count += chunk.samples.length;
    expect(count).toBe(12_000);
  });

  it('the same format passes through byte for byte, counted frame by frame', async () => {
    const mp3 = await EncodedAudio.fromPcm(chunked(signal(3, 24_000), 24_000), 'mp3').whole();
    const relayed = transcodeAudio(bytesOf(mp3), 'mp3', 'mp3');
    expect(relayed).toBeInstanceOf(EncodedAudio);
    expect((await relayed.whole()).equals(mp3)).toBe(true);
    expect(relayed.seconds).toBeCloseTo(await decodedSeconds('mp3', mp3), 6);
    expect(relayed.trimmed).toBe(false);
  });

  it('garbage is an error, not silence', async () => {
    await expect(transcodeAudio(bytesOf(Buffer.from('this is not a wav file at all')), 'wav', 'mp3').whole()).rejects.toThrow('not a WAV');
  });
});

describe('resampler', () => {
  function rms(samples: Int16Array, from = 0, to = samples.length): number {
    let sum = 0;
    for (let i = from; i < to; i++) sum += samples[i]! ** 2;
    return Math.sqrt(sum / (to - from));
  }

  function run(input: Int16Array, from: number, to: number, chunk = 1000): Int16Array {
    const resampler = new Resampler(from, to);
    const parts: Int16Array[] = [];
    for (let i = 0; i < input.length; i += chunk) parts.push(resampler.push(input.subarray(i, i + chunk)));
    parts.push(resampler.flush());
    const out = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }

  it('22.05 → 24 kHz keeps length, pitch and loudness, whatever the chunking', async () => {
    const tone = Int16Array.from({ length: 22_050 }, (_, i) => Math.round(10_000 * Math.sin((2 * Math.PI * 1000 * i) / 22_050)));
    const out = run(tone, 22_050, 24_000);
    expect(out.length).toBe(24_000);
    expect(run(tone, 22_050, 24_000, 7)).toEqual(out);
    let crossings = 0;
    for (let i = 1; i < out.length; i++) if (out[i - 1]! < 0 !== out[i]! < 0) crossings += 1;
    expect(crossings).toBeGreaterThan(1990);
    expect(crossings).toBeLessThan(2010);
    expect(rms(out, 1000, 23_000) / rms(tone, 1000, 21_000)).toBeCloseTo(1, 1);
  });

  it('48 → 24 kHz filters out what would alias (a 15 kHz tone)', async () => {
    const high = Int16Array.from({ length: 48_000 }, (_, i) => Math.round(10_000 * Math.sin((2 * Math.PI * 15_000 * i) / 48_000)));
    const out = run(high, 48_000, 24_000);
    expect(out.length).toBe(24_000);
    expect(rms(out, 1000, 23_000)).toBeLessThan(rms(high) * 0.02);
  });
});

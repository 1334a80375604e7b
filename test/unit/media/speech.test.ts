/**
 * The embedded speech engine (espeak-ng, WebAssembly, in a worker thread): every preset voice speaks —
 * real, non-silent audio of a plausible length — Chinese included; speed, formats, streaming,
 * cancellation, and request checks.
 */
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../server/errors/app-error.ts';
import { EspeakEngine } from '../../../server/modules/media/speech/espeak.engine.ts';
import { listVoices } from '../../../server/modules/media/speech/speech.voices.ts';

const engine = new EspeakEngine();
afterAll(() => engine.close());

const english = 'The quick brown fox jumps over the lazy dog near the quiet river bank.';
const chinese = '今天天气很好，我们一起去公园散步吧。';

interface Wav {
  sampleRate: number;
  samples: Int16Array;
  seconds: number;
  rms: number;
}

function readWav(file: Buffer): Wav {
  expect(file.toString('ascii', 0, 4)).toBe('RIFF');
  expect(file.toString('ascii', 8, 12)).toBe('WAVE');
  expect(file.readUInt16LE(20)).toBe(1);
  expect(file.readUInt16LE(22)).toBe(1);
  expect(file.readUInt16LE(34)).toBe(16);
  const sampleRate = file.readUInt32LE(24);
  const dataBytes = file.readUInt32LE(40);
  expect(dataBytes).toBe(file.length - 44);
  const samples = new Int16Array(file.buffer.slice(file.byteOffset + 44, file.byteOffset + 44 + dataBytes));
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return { sampleRate, samples, seconds: samples.length / sampleRate, rms: Math.sqrt(sum / samples.length) };
}

/** Zero crossings per second: higher for higher voices. */
function crossingRate(wav: Wav): number {
  let crossings = 0;
  for (let i = 1; i < wav.samples.length; i++) if (wav.samples[i - 1]! < 0 !== wav.samples[i]! < 0) crossings += 1;
  return crossings / wav.seconds;
}

async function speakWav(input: string, voice: string, speed?: number): Promise<Wav> {
  const audio = engine.speak({ input, voice, format: 'wav', ...(speed === undefined ? {} : { speed }) });
  const wav = readWav(await audio.whole());
  expect(audio.seconds).toBeCloseTo(wav.seconds, 3);
  return wav;
}

describe('embedded speech engine', () => {
  it('lists the preset voices with id, language, gender and description, Chinese ones included', () => {
    const voices = listVoices();
    expect(voices.map((voice) => voice.id)).toEqual(expect.arrayContaining(['alloy', 'echo', 'fable', 'nova', 'onyx', 'shimmer', 'zh-female', 'zh-male']));
    for (const voice of voices) {
      expect(voice).toEqual({ id: expect.any(String), name: expect.any(String), language: expect.any(String), gender: expect.stringMatching(/^(female|male|neutral)$/), description: expect.any(String) });
    }
    expect(voices.filter((voice) => voice.language.startsWith('zh')).length).toBeGreaterThanOrEqual(2);
    expect(engine.listVoices()).toEqual(voices);
  });

  it.each(listVoices().map((voice) => [voice.id, voice.language] as const))('%s speaks: a real, non-silent WAV of plausible length', async (id, language) => {
    const chineseVoice = language.startsWith('zh');
    const wav = await speakWav(chineseVoice ? chinese : english, id);
    expect(wav.sampleRate).toBe(24_000);
    expect(wav.rms).toBeGreaterThan(1000);
    // About 2.5 words (or 4 Chinese characters) a second; allow 0.5× to 3× of that.
    const expected = chineseVoice ? [...chinese.replace(/\p{P}/gu, '')].length / 4 : english.split(/\s+/).length / 2.5;
    expect(wav.seconds).toBeGreaterThan(expected * 0.5);
    expect(wav.seconds).toBeLessThan(expected * 3);
  });

  it('the voices sound different: distinct audio, and onyx is lower than shimmer', async () => {
    const hashes = new Set<string>();
    for (const id of ['alloy', 'echo', 'nova', 'onyx', 'shimmer']) {
      const wav = await speakWav('Good morning, how are you today?', id);
      hashes.add(createHash('sha256').update(wav.samples).digest('hex'));
    }
    expect(hashes.size).toBe(5);
    const onyx = await speakWav(english, 'onyx');
    const shimmer = await speakWav(english, 'shimmer');
    expect(crossingRate(onyx)).toBeLessThan(crossingRate(shimmer));
  });

  it('reads Chinese text in Mandarin even with an English voice, instead of spelling it out', async () => {
    const wav = await speakWav(chinese, 'nova');
    expect(wav.rms).toBeGreaterThan(1000);
    const characters = [...chinese.replace(/\p{P}/gu, '')].length;
    expect(wav.seconds).toBeLessThan((characters / 4) * 2);
    // Mixed text is spoken too.
    expect((await speakWav('svc 是一个自托管的服务。It speaks English too.', 'zh-female')).rms).toBeGreaterThan(1000);
  });

  it('speed changes the pace', async () => {
    const normal = await speakWav(english, 'echo');
    const fast = await speakWav(english, 'echo', 2);
    const slow = await speakWav(english, 'echo', 0.5);
    expect(fast.seconds / normal.seconds).toBeGreaterThan(0.35);
    expect(fast.seconds / normal.seconds).toBeLessThan(0.7);
    expect(slow.seconds / normal.seconds).toBeGreaterThan(1.4);
  });

  it('input is text, not SSML: markup cannot ask for minutes of silence', async () => {
    const wav = await speakWav('<break time="100s"/> Hello & goodbye <speak>', 'echo');
    expect(wav.seconds).toBeLessThan(10);
    expect(wav.rms).toBeGreaterThan(500);
  });

  it.each([
    ['mp3', (file: Buffer) => file[0] === 0xff && (file[1]! & 0xe0) === 0xe0],
    ['opus', (file: Buffer) => file.toString('ascii', 0, 4) === 'OggS' && file.toString('ascii', 28, 36) === 'OpusHead'],
    ['flac', (file: Buffer) => file.toString('ascii', 0, 4) === 'fLaC'],
    ['pcm', (file: Buffer) => file.length % 2 === 0],
  ] as const)('speaks %s', async (format, looksRight) => {
    const audio = engine.speak({ input: 'Formats are converted on the fly.', voice: 'coral', format });
    const file = await audio.whole();
    expect(looksRight(file)).toBe(true);
    expect(audio.seconds).toBeGreaterThan(1);
    expect(audio.seconds).toBeLessThan(6);
    if (format === 'pcm') expect(file.length).toBe(Math.round(audio.seconds * 24_000) * 2);
  });

  it('mp3 is the default format', async () => {
    const audio = engine.speak({ input: 'Default.', voice: 'alloy' });
    expect(audio.format).toBe('mp3');
    expect(audio.contentType).toBe('audio/mpeg');
    expect((await audio.whole())[0]).toBe(0xff);
  });

  it('streams long input in many chunks, and a reader that goes away cancels the synthesis', async () => {
    const long = 'This sentence is repeated to make a long text for the speech engine. '.repeat(58).slice(0, 4000);
    let started = Date.now();
    const full = engine.speak({ input: long, voice: 'echo', format: 'pcm' });
    let chunks = 0;
    for await (const _chunk of full.body) chunks += 1;
    const fullMs = Date.now() - started;
    expect(chunks).toBeGreaterThan(100);
    expect(full.seconds).toBeGreaterThan(120);

    started = Date.now();
    const abandoned = engine.speak({ input: long, voice: 'echo', format: 'mp3' });
    for await (const _chunk of abandoned.body) break;
    // The worker takes one job at a time: this one is done quickly only if the abandoned one stopped.
    await engine.speak({ input: 'Next, please.', voice: 'echo', format: 'mp3' }).whole();
    expect(Date.now() - started).toBeLessThan(fullMs * 0.7);
    expect(abandoned.seconds).toBeLessThan(30);
  });

  it.each([
    [{ input: '', voice: 'alloy' }, 'input'],
    [{ input: '   ', voice: 'alloy' }, 'input'],
    [{ input: 'x'.repeat(4097), voice: 'alloy' }, 'input'],
    [{ input: 'hi', voice: 'nobody' }, 'voice'],
    [{ input: 'hi', voice: 'alloy', speed: 0.1 }, 'speed'],
    [{ input: 'hi', voice: 'alloy', speed: 4.5 }, 'speed'],
    [{ input: 'hi', voice: 'alloy', format: 'aac' }, 'response_format'],
  ])('rejects %j naming %s', (request, param) => {
    try {
      engine.speak(request);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('invalid_request');
      expect((error as AppError).options.param).toBe(param);
    }
  });

  it('4,096 characters is still fine', () => {
    expect(() => engine.speak({ input: '好'.repeat(4096), voice: 'zh-female' }).body.destroy()).not.toThrow();
  });
});

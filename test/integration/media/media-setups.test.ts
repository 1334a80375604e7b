/**
 * The media products as a fresh install runs them, and with S3 storage:
 * - no upstream at all (no SVC_UPSTREAM_URL): svc-tts speaks with the embedded espeak-ng engine through
 *   `POST /v1/audio/speech` (a real, non-silent WAV of plausible length), svc-music and svc-img answer 503
 *   saying how to configure an upstream;
 * - per-model deployments with fallback, as for chat, and no SVC_UPSTREAM_URL;
 * - `media.storage.kind: s3` against s3rver: svc-img's links serve the upstream's bytes from the bucket.
 * Real PostgreSQL and Redis.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultModels } from '../../../server/config/catalogue.ts';
import { decodeAudio } from '../../../server/modules/media/audio/audio.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { startS3, type TestS3 } from '../../helpers/s3-server.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { createMember, ledgerRows, relaxedLimits } from '../gateway/harness.ts';

/** A RIFF WAV's format and its 16-bit samples (the streamed header's sizes are "unknown": read to the end). */
function readWav(bytes: Buffer): { sampleRate: number; channels: number; bits: number; samples: Int16Array } {
  expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
  expect(bytes.subarray(8, 12).toString('latin1')).toBe('WAVE');
  expect(bytes.subarray(36, 40).toString('latin1')).toBe('data');
  const data = bytes.subarray(44);
  const samples = new Int16Array(data.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
  return { channels: bytes.readUInt16LE(22), sampleRate: bytes.readUInt32LE(24), bits: bytes.readUInt16LE(34), samples };
}

describe('no upstream: the embedded speech engine', () => {
  let mode: Awaited<ReturnType<typeof realMode>>;
  let app: TestApp;
  let dir: string;

  beforeAll(async () => {
    mode = await realMode();
    dir = mkdtempSync(join(tmpdir(), 'svc-media-embedded-'));
    app = await startApp(mode.config, { config: { ...relaxedLimits, media: { storage: { kind: 'local', dir } } } });
  });
  afterAll(async () => {
    await app?.close();
    await mode?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('speaks a sentence as a real, non-silent WAV of plausible length, billed by its seconds', async () => {
    const member = await createMember(app);
    const input = 'The quick brown fox jumps over the lazy dog. It was a bright cold day in April.';
    const response = await member.client.audio.speech.create({ model: 'svc-tts', input, voice: 'coral', response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const wav = readWav(Buffer.from(await response.arrayBuffer()));
    expect(wav).toMatchObject({ channels: 1, sampleRate: 24_000, bits: 16 });
    const seconds = wav.samples.length / wav.sampleRate;
    // 16 words at espeak's 175 words a minute, with two sentence pauses: about 5 s.
    expect(seconds).toBeGreaterThan(3);
    expect(seconds).toBeLessThan(9);
    let sumSquares = 0;
    let peak = 0;
    let loudFrames = 0;
    const frame = 2400;
    for (let start = 0; start + frame <= wav.samples.length; start += frame) {
      let frameSquares = 0;
      for (let i = start; i < start + frame; i++) {
        const sample = wav.samples[i]!;
        frameSquares += sample * sample;
        peak = Math.max(peak, Math.abs(sample));
      }
      sumSquares += frameSquares;
      if (Math.sqrt(frameSquares / frame) > 500) loudFrames++;
    }
    expect(Math.sqrt(sumSquares / wav.samples.length)).toBeGreaterThan(500);
    expect(peak).toBeGreaterThan(5000);
    // Speech, not a click: most 100 ms frames carry sound.
    expect(loudFrames).toBeGreaterThan(wav.samples.length / frame / 2);

    const [row] = await ledgerRows(mode.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'speech', unit: 'audio_second', status: 'ok', deployment: 'embedded' });
    expect(Number(row!.unit_quantity)).toBeCloseTo(seconds, 2);
    expect(row!.output_tokens).toBe(Math.ceil(Number(row!.unit_quantity) * 25 - 1e-6));
  });

  it('answers mp3 by default, and reads Chinese with a Chinese voice', async () => {
    const member = await createMember(app);
    const response = await member.client.audio.speech.create({ model: 'svc-tts', input: '你好，欢迎收听新闻。', voice: 'zh-female' as 'alloy' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    let seconds = 0;
    for await (const chunk of decodeAudio(Readable.from([Buffer.from(await response.arrayBuffer())]), 'mp3')) seconds += chunk.samples.length / chunk.sampleRate;
    expect(seconds).toBeGreaterThan(1);
    expect(seconds).toBeLessThan(6);
  });

  it('answers svc-music and svc-img with 503 upstream_unavailable saying how to configure one', async () => {
    const member = await createMember(app);
    const music = await fetch(`${app.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-music', input: 'a song' }),
    });
    expect(music.status).toBe(503);
    const body = (await music.json()) as { code: string; message: string; stage: string };
    expect(body).toMatchObject({ code: 'upstream_unavailable', stage: 'routing' });
    expect(body.message).toMatch(/SVC_UPSTREAM_URL/);
    expect(body.message).toMatch(/models\.svc-music\.deployments/);

    const image = await member.client.chat.completions.create({ model: 'svc-img', messages: [{ role: 'user', content: 'a cat' }] }).catch((error: unknown) => error);
    expect(image).toBeInstanceOf(OpenAI.InternalServerError);
    expect((image as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((image as InstanceType<typeof OpenAI.APIError>).message).toMatch(/SVC_UPSTREAM_URL/);
    expect(await ledgerRows(mode.database, member.accountId, 0)).toEqual([]);
  });
});

describe('media deployments', () => {
  let mode: Awaited<ReturnType<typeof realMode>>;
  let app: TestApp;
  let broken: ScriptedUpstream;
  let good: ScriptedUpstream;
  let dir: string;

  beforeAll(async () => {
    broken = await startScriptedUpstream({ defaults: { status: 500 } });
    good = await startScriptedUpstream();
    mode = await realMode();
    dir = mkdtempSync(join(tmpdir(), 'svc-media-deployments-'));
    app = await startApp(mode.config, {
      config: {
        ...relaxedLimits,
        media: { storage: { kind: 'local', dir } },
        upstreams: { 'gpu-a': { baseUrl: broken.url, label: 'gpu-a' }, 'gpu-b': { baseUrl: good.url, label: 'gpu-b' } },
        models: {
          ...defaultModels,
          'svc-img': { ...defaultModels['svc-img'], deployments: [{ upstream: 'gpu-a', model: 'flux-dev' }, { upstream: 'gpu-b', model: 'flux-schnell' }] },
          'svc-music': { ...defaultModels['svc-music'], deployments: [{ upstream: 'gpu-a', model: 'musicgen-large' }] },
        },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
    await broken?.close();
    await good?.close();
    await mode?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('falls back to the next image deployment with its own upstream model name', async () => {
    const member = await createMember(app);
    const completion = await member.client.chat.completions.create({ model: 'svc-img', messages: [{ role: 'user', content: 'a windmill' }] });
    expect(completion.choices[0]!.message.content).toMatch(/^!\[a windmill\]\(http:\/\/127\.0\.0\.1:\d+\/v1\/media\/[A-Za-z0-9_-]{22}\.png\)$/);
    expect(broken.media.at(-1)!.body.model).toBe('flux-dev');
    expect(good.media.at(-1)!.body.model).toBe('flux-schnell');
    const [row] = await ledgerRows(mode.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'image', status: 'ok', deployment: 'gpu-b' });
  });

  it('reports the last music deployment by its label when all fail, refunded; svc-tts without one still speaks', async () => {
    const member = await createMember(app);
    const music = await fetch(`${app.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-music', input: 'a waltz', duration: 20 }),
    });
    expect(music.status).toBe(502);
    const body = await music.text();
    expect(JSON.parse(body)).toMatchObject({ code: 'upstream_error', debug: { upstreamHost: 'gpu-a', upstreamStatus: 500, quotaRefunded: true } });
    expect(body).not.toContain('127.0.0.1');
    expect(broken.media.at(-1)!.body).toMatchObject({ model: 'musicgen-large', duration: 20 });

    const speech = await member.client.audio.speech.create({ model: 'svc-tts', input: 'Still speaking.', voice: 'ash', response_format: 'pcm' });
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(24_000);
    const rows = await ledgerRows(mode.database, member.accountId, 2);
    expect(rows.map((row) => [row.product, row.status])).toEqual([
      ['music', 'refunded'],
      ['speech', 'ok'],
    ]);
  });
});

describe('S3 storage end to end', () => {
  let mode: Awaited<ReturnType<typeof realMode>>;
  let app: TestApp;
  let s3: TestS3;
  let upstream: ScriptedUpstream;

  beforeAll(async () => {
    s3 = await startS3();
    upstream = await startScriptedUpstream();
    mode = await realMode();
    app = await startApp(mode.config, {
      config: {
        ...relaxedLimits,
        media: { storage: { kind: 's3', endpoint: s3.endpoint, bucket: s3.bucket, prefix: 'generated/', forcePathStyle: true, accessKeyIdEnv: 'K', secretAccessKeyEnv: 'S' } },
      },
      env: { K: s3.accessKeyId, S: s3.secretAccessKey, SVC_UPSTREAM_URL: upstream.url },
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await mode?.cleanup();
    await s3?.close();
  });

  it('stores svc-img’s images in the bucket and serves them at their links, ranges included', async () => {
    expect(app.app.services.media.storage.kind).toBe('s3');
    const member = await createMember(app);
    const completion = await member.client.chat.completions.create({
      model: 'svc-img',
      messages: [{ role: 'user', content: 'a harbour at night' }],
      n: 2,
      size: '256x256',
    } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    const urls = [...completion.choices[0]!.message.content!.matchAll(/\]\((http[^)]+)\)/g)].map((match) => match[1]!);
    expect(urls).toHaveLength(2);
    const produced = upstream.media.at(-1)!.produced;
    for (const [index, url] of urls.entries()) {
      const whole = await fetch(url);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await whole.arrayBuffer()).equals(produced[index]!)).toBe(true);
      const part = await fetch(url, { headers: { range: 'bytes=0-7' } });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer()).equals(produced[index]!.subarray(0, 8))).toBe(true);
      const id = /\/v1\/media\/([A-Za-z0-9_-]{22})\.png$/.exec(url)![1]!;
      expect(await app.app.services.media.storage.stat({ id, ext: 'png' })).toMatchObject({ size: produced[index]!.length, contentType: 'image/png' });
    }
    const [row] = await ledgerRows(mode.database, member.accountId, 1);
    // A sixteenth of 1024×1024 is 62.5 tokens, rounded up per image.
    expect(row).toMatchObject({ product: 'image', unit: 'image', status: 'ok', output_tokens: 126 });
  });
});

/**
 * `POST /v1/audio/speech` with the official SDK (`client.audio.speech.create`) against the scripted
 * upstream's `/audio/speech`: svc-tts and svc-music relayed or converted as they arrive, music's 30 s
 * default, validation, refunds, and ledger rows per product with their units. Real PostgreSQL and Redis.
 */
import { Readable } from 'node:stream';
import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAudio } from '../../../server/modules/media/audio/audio.ts';
import type { AudioFormat } from '../../../server/modules/media/audio/format.ts';
import { bearerGraphQL } from '../../helpers/browser.ts';
import { ledgerRows, startHarness, type Harness, type Member } from '../gateway/harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ config: { media: { maxMusicSeconds: 60 } } });
});
afterAll(() => h?.close());

/** The SDK's request type has no `duration` (svc-music) and requires a voice (svc-music needs none). */
type SpeechParams = Omit<OpenAI.Audio.SpeechCreateParams, 'voice'> & { voice?: string; duration?: number };

function speak(member: Member, params: SpeechParams): Promise<Response> {
  return member.client.audio.speech.create(params as OpenAI.Audio.SpeechCreateParams);
}

/** Seconds of audio in a file, decoded the way svc measures it. */
async function secondsOf(bytes: Buffer, format: AudioFormat): Promise<number> {
  let seconds = 0;
  for await (const chunk of decodeAudio(Readable.from([bytes]), format)) seconds += chunk.samples.length / chunk.sampleRate;
  return seconds;
}

function post(member: Member, body: unknown): Promise<Response> {
  return fetch(`${h.app.url}/v1/audio/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function poolUsed(member: Member, cls: 'fast' | 'premium'): Promise<number> {
  const principal = await h.app.app.services.identity.authenticateBearer(`Bearer ${member.key}`);
  const report = await h.app.app.services.usage.report(principal.payer);
  return report.pools.find((pool) => pool.class === cls && pool.window === 'day')!.used.amountMicros;
}

describe('svc-tts through an upstream', () => {
  it('relays the upstream’s audio byte for byte when it is in the format asked for, and bills its seconds', async () => {
    const member = await h.member();
    const response = await speak(member, { model: 'svc-tts', input: 'Good evening, and welcome to the news.', voice: 'nova' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = Buffer.from(await response.arrayBuffer());
    const upstream = h.upstream.media.at(-1)!;
    expect(upstream.body).toEqual({ model: 'svc-tts', input: 'Good evening, and welcome to the news.', voice: 'nova', response_format: 'mp3', speed: 1 });
    expect(bytes.equals(upstream.produced[0]!)).toBe(true);

    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'speech', unit: 'audio_second', model: 'svc-tts', status: 'ok', stream: true });
    const seconds = Number(row!.unit_quantity);
    // The scripted voice speaks 0.06 s a character: 38 characters ≈ 2.28 s (mp3 frames round it up a little).
    expect(seconds).toBeGreaterThan(2.2);
    expect(seconds).toBeLessThan(2.5);
    expect(row!.output_tokens).toBe(Math.ceil(seconds * 25));
    expect(row!.input_tokens).toBeGreaterThan(5);
    expect(Number(row!.cost_micros)).toBeGreaterThan(0);
    expect(Number(row!.cost_micros)).toBeLessThanOrEqual(Number(row!.reserved_micros));
  });

  it('converts what the upstream sent in another format into the one asked for', async () => {
    const member = await h.member();
    const response = await speak(member, { model: 'svc-tts', input: '#script {"audioFormat":"wav","seconds":3} Converted.', voice: 'onyx', response_format: 'flac', speed: 1.5 });
    expect(response.headers.get('content-type')).toBe('audio/flac');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('fLaC');
    expect(await secondsOf(bytes, 'flac')).toBeCloseTo(3, 2);
    expect(h.upstream.media.at(-1)!.body).toMatchObject({ response_format: 'flac', speed: 1.5, voice: 'onyx' });
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(Number(row!.unit_quantity)).toBeCloseTo(3, 2);
    expect(row!.output_tokens).toBe(75);
  });

  it('streams the body as it arrives, not after the upstream has finished', async () => {
    const member = await h.member();
    const started = performance.now();
    const response = await post(member, {
      model: 'svc-tts',
      input: '#script {"seconds":2,"audioChunkBytes":16000,"audioIntervalMs":150} Slowly.',
      voice: 'alloy',
      response_format: 'pcm',
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const arrivals: number[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(performance.now() - started);
      total += value.length;
    }
    // 2 s of 24 kHz 16-bit PCM is 96,000 bytes, sent in six pieces 150 ms apart.
    expect(total).toBe(96_000);
    expect(arrivals[0]!).toBeLessThan(arrivals.at(-1)! - 500);
  });

  it('refunds in full when the upstream fails before any audio', async () => {
    const member = await h.member();
    const usedBefore = await poolUsed(member, 'fast');
    const response = await post(member, { model: 'svc-tts', input: '#script {"status":500} Fail.', voice: 'alloy' });
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toMatchObject({ ok: false, code: 'upstream_error', debug: { productModel: 'svc-tts', quotaRefunded: true, upstreamHost: 'default', upstreamStatus: 500 } });
    const error = await speak(member, { model: 'svc-tts', input: '#script {"status":503} Fail again.', voice: 'alloy' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    const rows = await ledgerRows(h.database, member.accountId, 2);
    expect(rows.map((row) => [row.product, row.status, row.cost_micros])).toEqual([
      ['speech', 'refunded', '0'],
      ['speech', 'refunded', '0'],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await poolUsed(member, 'fast')).toBe(usedBefore);
  });

  it('sends no 200 for an upstream that answers and dies before any audio: a JSON error, refunded', async () => {
    const member = await h.member();
    const response = await post(member, { model: 'svc-tts', input: '#script {"failAfterBytes":0} Nothing.', voice: 'alloy' });
    // The connection died: "unavailable", retryable.
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ ok: false, code: 'upstream_unavailable', debug: { quotaRefunded: true } });
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'speech', status: 'refunded', cost_micros: '0' });
  });

  it('stops the upstream when the client leaves, and bills what was delivered', async () => {
    const member = await h.member();
    const aborted = h.upstream.stats.aborted;
    const controller = new AbortController();
    const response = await fetch(`${h.app.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-tts', input: '#script {"seconds":10,"audioChunkBytes":24000,"audioIntervalMs":100} Long.', voice: 'alloy', response_format: 'pcm' }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'speech', status: 'client_disconnected' });
    expect(Number(row!.unit_quantity)).toBeGreaterThan(0);
    expect(Number(row!.unit_quantity)).toBeLessThan(5);
    await expect.poll(() => h.upstream.stats.aborted).toBe(aborted + 1);
  });

  it('speaks with the embedded engine when the quick-start upstream has no /audio/speech (404), but never for music', async () => {
    const member = await h.member();
    const response = await speak(member, { model: 'svc-tts', input: '#script {"status":404} Hello.', voice: 'echo', response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(await secondsOf(bytes, 'wav')).toBeGreaterThan(0.5);
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'speech', status: 'ok', deployment: 'embedded', upstream_status: null });

    // Music never falls back: the upstream's 404 comes back as its own (the request's fault, not a server failure).
    const music = await post(member, { model: 'svc-music', input: '#script {"status":404} A song.' });
    expect(music.status).toBe(404);
    expect(await music.json()).toMatchObject({ code: 'upstream_rejected', debug: { upstreamStatus: 404, quotaRefunded: true } });
  });

  it('cuts the body short when the upstream fails mid-stream, billing what was delivered', async () => {
    const member = await h.member();
    const response = await post(member, { model: 'svc-tts', input: '#script {"seconds":10,"failAfterBytes":48000,"audioChunkBytes":8000} Cut.', voice: 'alloy', response_format: 'pcm' });
    expect(response.status).toBe(200);
    const received = await response.arrayBuffer().then(
      (body) => body.byteLength,
      () => -1,
    );
    expect(received).not.toBe(480_000);
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'speech', status: 'upstream_failed' });
    // 48,000 bytes of 24 kHz 16-bit PCM is one second.
    expect(Number(row!.unit_quantity)).toBe(1);
    expect(row!.output_tokens).toBe(25);
  });
});

describe('svc-music', () => {
  it('asks the upstream for 30 seconds by default and bills the seconds it made', async () => {
    const member = await h.member();
    const response = await speak(member, { model: 'svc-music', input: 'A calm piano piece for a rainy afternoon', response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const bytes = Buffer.from(await response.arrayBuffer());
    const upstream = h.upstream.media.at(-1)!;
    expect(upstream.body).toMatchObject({ model: 'svc-music', duration: 30, response_format: 'wav' });
    expect(upstream.body.voice).toBeUndefined();
    expect(bytes.equals(upstream.produced[0]!)).toBe(true);
    expect(await secondsOf(bytes, 'wav')).toBeCloseTo(30, 2);
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'music', unit: 'audio_second', model: 'svc-music', output_tokens: 750, status: 'ok' });
    expect(Number(row!.unit_quantity)).toBeCloseTo(30, 2);
  });

  it('honours duration, and bills no more than was reserved for it', async () => {
    const member = await h.member();
    const response = await speak(member, { model: 'svc-music', input: 'Upbeat synth pop', duration: 12, response_format: 'opus' });
    expect(response.headers.get('content-type')).toBe('audio/ogg; codecs=opus');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(h.upstream.media.at(-1)!.body).toMatchObject({ model: 'svc-music', duration: 12, response_format: 'opus' });
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(Number(row!.unit_quantity)).toBeGreaterThan(11.9);
    expect(row!.output_tokens).toBe(300);

    // An upstream that makes a longer song than asked: the song is cut at the 5 s reserved, and billed 5 s.
    const long = await speak(member, { model: 'svc-music', input: '#script {"seconds":20} Too long', duration: 5, response_format: 'pcm' }).then((r) => r.arrayBuffer());
    expect(long.byteLength).toBe(5 * 24_000 * 2);
    const rows = await ledgerRows(h.database, member.accountId, 2);
    expect(Number(rows[1]!.unit_quantity)).toBe(5);
    expect(rows[1]!.output_tokens).toBe(125);
  });
});

describe('audio_never_runs_past_its_reservation', () => {
  /** Seconds a delivered file plays, by an independent decoder (mpg123, libopus, libFLAC) or its size. */
  async function plays(bytes: Buffer, format: AudioFormat): Promise<number> {
    if (format === 'pcm') return bytes.length / 2 / 24_000;
    if (format === 'wav') return (bytes.length - 44) / 2 / bytes.readUInt32LE(24);
    const decoder = format === 'mp3' ? new MPEGDecoder() : format === 'flac' ? new FLACDecoder() : new OggOpusDecoder();
    await decoder.ready;
    const result = decoder instanceof MPEGDecoder ? decoder.decode(bytes) : await decoder.decodeFile(bytes);
    decoder.free();
    return result.samplesDecoded / result.sampleRate;
  }

  // What music servers send: 44.1 kHz MPEG-1 MP3, FLAC and WAV; Opus at 48 kHz; raw PCM at OpenAI's 24 kHz.
  const formats: [AudioFormat, number][] = [
    ['mp3', 44_100],
    ['opus', 48_000],
    ['flac', 44_100],
    ['wav', 44_100],
    ['pcm', 24_000],
  ];

  it.each(formats)('music asked for 5 s, the upstream sends 20 s of %s at %d Hz: 5 s at most are delivered and billed', async (format, rate) => {
    const member = await h.member();
    const aborted = h.upstream.stats.aborted;
    const response = await post(member, { model: 'svc-music', input: `#script {"seconds":20,"audioSampleRate":${rate}} A long song`, duration: 5, response_format: format });
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    const sent = h.upstream.media.at(-1)!;
    expect(sent.seconds).toBe(20);
    const played = await plays(bytes, format);
    expect(played).toBeLessThanOrEqual(5);
    // Cut at a frame at worst (MP3: 1152 samples; FLAC: 4096).
    expect(played).toBeGreaterThan(5 - 4096 / rate);
    // Passed on as the upstream sent it, up to the cut: the same bytes, not a re-encoding.
    if (format === 'mp3' || format === 'pcm') expect(bytes.equals(sent.produced[0]!.subarray(0, bytes.length))).toBe(true);

    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'music', status: 'ok', estimated: false });
    expect(Number(row!.unit_quantity)).toBeCloseTo(played, 3);
    expect(row!.output_tokens).toBe(Math.ceil(Number(row!.unit_quantity) * 25 - 1e-6));
    expect(row!.output_tokens).toBeLessThanOrEqual(125);
    expect(Number(row!.cost_micros)).toBeLessThanOrEqual(Number(row!.reserved_micros));
    // svc stopped reading the upstream at the cut.
    await expect.poll(() => h.upstream.stats.aborted).toBe(aborted + 1);
  });

  it('audio converted on the way is cut to the sample: 20 s of WAV asked as mp3 and flac', async () => {
    const member = await h.member();
    for (const format of ['mp3', 'flac'] as const) {
      const response = await post(member, { model: 'svc-music', input: '#script {"seconds":20,"audioFormat":"wav","audioSampleRate":44100} Converted', duration: 3, response_format: format });
      const played = await plays(Buffer.from(await response.arrayBuffer()), format);
      // MP3 adds LAME's encoder delay and pads to a whole frame (576 samples at 24 kHz): silence, not song.
      expect(played).toBeGreaterThanOrEqual(3);
      expect(played).toBeLessThan(format === 'mp3' ? 3 + 2 * 1152 / 24_000 : 3 + 1e-9);
    }
    const rows = await ledgerRows(h.database, member.accountId, 2);
    expect(rows.map((row) => [Number(row.unit_quantity), row.output_tokens])).toEqual([
      [3, 75],
      [3, 75],
    ]);
  });

  it('speech is reserved and cut from its characters and speed: a slower speed reserves (and may deliver) more', async () => {
    const member = await h.member();
    const input = 'Good evening.';
    // An upstream that ignores the text and speaks for a minute.
    h.upstream.setScript(() => ({ seconds: 60 }));
    try {
      for (const speed of [1, 0.5, 0.25]) {
        const response = await post(member, { model: 'svc-tts', input, voice: 'alloy', response_format: 'pcm', speed });
        const bytes = Buffer.from(await response.arrayBuffer());
        // ceil((1 + 0.5 s × 13 characters) ÷ speed)
        expect(bytes.length / 2 / 24_000, `speed ${speed}`).toBe(Math.ceil(7.5 / speed));
      }
    } finally {
      h.upstream.setScript(null);
    }
    const rows = await ledgerRows(h.database, member.accountId, 3);
    expect(rows.map((row) => Number(row.unit_quantity))).toEqual([8, 15, 30]);
    expect(rows.map((row) => row.output_tokens)).toEqual([200, 375, 750]);
    // The reservation grows as the speed slows: it covers what may be delivered.
    const reserved = rows.map((row) => Number(row.reserved_micros));
    expect(reserved[0]!).toBeLessThan(reserved[1]!);
    expect(reserved[1]!).toBeLessThan(reserved[2]!);
    for (const row of rows) expect(Number(row.cost_micros)).toBeLessThanOrEqual(Number(row.reserved_micros));
  });
});

describe('audio that cannot be counted', () => {
  it('is never relayed: a JSON error before any byte, refunded in full', async () => {
    const member = await h.member();
    // Raw PCM labelled audio/mpeg (mp3 was asked for): it has no MP3 frames to count or to cut at.
    const response = await post(member, { model: 'svc-music', input: '#script {"audioFormat":"pcm","contentType":"audio/mpeg","seconds":2} Noise.', duration: 5 });
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as { code: string; message: string; debug: { quotaRefunded: boolean } };
    expect(body).toMatchObject({ code: 'upstream_error', debug: { quotaRefunded: true, upstreamStatus: 200 } });
    expect(body.message).toMatch(/^The model server sent audio that is not readable as mp3 \(no MPEG audio frame in \d+ bytes\)/);
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'music', status: 'refunded', cost_micros: '0' });
  });
});

describe('validation', () => {
  it('answers bad requests with a 400 envelope naming the field, before anything is sent upstream', async () => {
    const member = await h.member();
    const requests = h.upstream.stats.requests;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ input: 'x', voice: 'alloy' }, 'model', /model is required/],
      [{ model: 'svc-2.1', input: 'x', voice: 'alloy' }, 'model', /svc-2\.1 does not make audio/],
      [{ model: 'svc-tts', input: '', voice: 'alloy' }, 'input', /non-empty/],
      [{ model: 'svc-tts', input: 'x'.repeat(4097), voice: 'alloy' }, 'input', /4096/],
      [{ model: 'svc-tts', input: 'x', voice: 'darth' }, 'voice', /alloy/],
      [{ model: 'svc-tts', input: 'x' }, 'voice', /alloy/],
      [{ model: 'svc-tts', input: 'x', voice: 'alloy', speed: 5 }, 'speed', /0\.25 to 4/],
      [{ model: 'svc-tts', input: 'x', voice: 'alloy', speed: 0.1 }, 'speed', /0\.25 to 4/],
      [{ model: 'svc-tts', input: 'x', voice: 'alloy', response_format: 'aac' }, 'response_format', /mp3, opus, flac, wav, pcm/],
      [{ model: 'svc-tts', input: 'x', voice: 'alloy', duration: 10 }, 'duration', /svc-music only/],
      [{ model: 'svc-music', input: 'x', duration: 61 }, 'duration', /1 to 60/],
      [{ model: 'svc-music', input: 'x', duration: 0 }, 'duration', /1 to 60/],
      [{ model: 'svc-music', input: 'x', duration: '30' }, 'duration', /1 to 60/],
      [{ model: 'svc-tts', input: 'x', voice: 'alloy', stream_format: 'sse' }, 'stream_format', /audio/],
      [{ model: 'svc-tts', input: 'x', voice: 'alloy', temperature: 1 }, 'temperature', /Unrecognized/],
    ];
    for (const [body, param, message] of cases) {
      const response = await post(member, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const envelope = (await response.json()) as { code: string; error: { param: string; message: string } };
      expect(envelope).toMatchObject({ code: 'invalid_request', error: { param } });
      expect(envelope.error.message).toMatch(message);
    }
    const unknown = await post(member, { model: 'nope', input: 'x', voice: 'alloy' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'model_not_found' });
    const notJson = await post(member, ['model']);
    expect(notJson.status).toBe(400);
    const anonymous = await fetch(`${h.app.url}/v1/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    expect(h.upstream.stats.requests).toBe(requests);
    expect(await ledgerRows(h.database, member.accountId, 0)).toEqual([]);
  });

  it('lists the preset voices', async () => {
    const member = await h.member();
    const response = await fetch(`${h.app.url}/v1/audio/voices`, { headers: { authorization: `Bearer ${member.key}` } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { object: string; data: { id: string; object: string; language: string }[] };
    expect(body.object).toBe('list');
    expect(body.data.map((voice) => voice.id)).toEqual(expect.arrayContaining(['alloy', 'nova', 'onyx', 'zh-female']));
    expect(body.data[0]).toMatchObject({ object: 'voice', id: 'alloy', language: 'en-US' });
    expect((await fetch(`${h.app.url}/v1/audio/voices`)).status).toBe(401);
  });
});

describe('ledger', () => {
  it('records one row per product with its own unit', async () => {
    const member = await h.member({ planPackage: 'pro' });
    await member.client.chat.completions.create({ model: 'svc-img', messages: [{ role: 'user', content: 'a tree' }], n: 2 });
    await speak(member, { model: 'svc-tts', input: 'One, two, three.', voice: 'sage', response_format: 'wav' }).then((r) => r.arrayBuffer());
    await speak(member, { model: 'svc-music', input: 'A short jingle', duration: 4, response_format: 'pcm' }).then((r) => r.arrayBuffer());
    await member.client.chat.completions.create({ model: 'svc-2.1', messages: [{ role: 'user', content: 'hello' }] });
    const rows = await ledgerRows(h.database, member.accountId, 4);
    expect(rows.map((row) => [row.product, row.model, row.unit, row.unit_quantity === null ? null : Number(row.unit_quantity)])).toEqual([
      ['image', 'svc-img', 'image', 2],
      ['speech', 'svc-tts', 'audio_second', Number(rows[1]!.unit_quantity)],
      ['music', 'svc-music', 'audio_second', 4],
      ['chat', 'svc-2.1', null, null],
    ]);
    expect(Number(rows[1]!.unit_quantity)).toBeCloseTo(16 * 0.06, 2);
    // The usage history (GraphQL) carries the same product and unit.
    const history = await bearerGraphQL<{ usageHistory: { nodes: { product: string; unit: string | null; unitQuantity: number | null }[] } }>(
      h.app.url,
      member.key,
      '{ usageHistory(first: 10) { nodes { product unit unitQuantity } } }',
    );
    expect(history.data!.usageHistory.nodes.map((node) => [node.product, node.unit, node.unitQuantity])).toEqual([
      ['chat', null, null],
      ['music', 'audio_second', 4],
      ['speech', 'audio_second', Number(rows[1]!.unit_quantity)],
      ['image', 'image', 2],
    ]);
  });
});

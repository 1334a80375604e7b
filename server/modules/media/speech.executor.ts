/**
 * The speech executor: `POST /v1/audio/speech` (OpenAI's request shape plus `duration`, DESIGN §8.5) for
 * `svc-tts` (preset voices; the embedded espeak-ng engine speaks when svc-tts has no upstream) and
 * `svc-music` (its upstream only; `duration` 30 s unless asked, at most `media.maxMusicSeconds`).
 *
 * The audio is streamed as it arrives, in the format asked for (mp3 by default, wav, opus, flac, pcm):
 * what an upstream sends in another format is converted on the way. Headers go out only once the first
 * bytes are ready, so an engine or upstream that fails at once is a JSON error with a full refund; one
 * that fails later cuts the body short (billed for what was delivered).
 *
 * Billing: input = the text's tokens; output = seconds × `media.audioTokensPerSecond`, with
 * `unit: {kind: 'audio_second'}`. Reserved before the call from what was asked: the requested duration
 * (music), or a bound from the text's length and speed (speech). The audio delivered never runs past
 * what was reserved: an engine or upstream that makes more is cut off there (to the sample, or at an
 * MP3/FLAC frame), and the ledger bills the seconds delivered, counted from the bytes that went out.
 */
import type { Config } from '../../config/config.ts';
import { AppError } from '../../errors/app-error.ts';
import { writeRawHead, type Exchange, type Executor, type TurnPlan } from '../../metering/executor.ts';
import { serverTiming, type Metered, type Turn } from '../../metering/turn.ts';
import { classifyUpstreamError, UpstreamFailure } from '../../metering/upstream-failure.ts';
import { drained } from '../gateway/chat.executor.ts';
import { quickPromptTokens, TokenEstimate, tokenizer } from '../gateway/token-estimate.ts';
import { dispatch } from '../model/dispatch.ts';
import type { ModelRegistry, RoutedModel } from '../model/model.registry.ts';
import { rateLimitHeaders } from '../../rate-limit/rate-limit.service.ts';
import { transcodeAudio, type EncodedAudio } from './audio/audio.ts';
import { audioFormats, isAudioFormat, type AudioFormat } from './audio/format.ts';
import { UnreadableAudio } from './audio/framing.ts';
import type { MediaService } from './media.service.ts';
import { audioOutputTokens } from './media.tokens.ts';
import { maxSpeechInputChars, type SpeechEngine } from './speech/speech.engine.ts';
import { findVoice, speechVoices } from './speech/speech.voices.ts';

export const speechModelId = 'svc-tts';
export const musicModelId = 'svc-music';
export const defaultMusicSeconds = 30;

/**
 * Speech is at most this long per character at speed 1 (espeak-ng reads "9876543210 " at ~0.18 s a
 * character, its slowest measured case; ordinary English ~0.06): the reservation bound for svc-tts,
 * `ceil((1 + 0.5 × characters) ÷ speed)` seconds, and where its audio is cut off.
 */
const boundSecondsPerChar = 0.5;

/** The seconds reserved for (and the most delivered of) speech of `characters` at `speed`. */
function speechBoundSeconds(characters: number, speed: number): number {
  return Math.ceil((1 + boundSecondsPerChar * characters) / speed);
}

const fields = new Set(['model', 'input', 'voice', 'response_format', 'speed', 'instructions', 'duration', 'stream_format']);

/** A checked `/v1/audio/speech` request. */
export interface SpeechRequest {
  input: string;
  /** svc-tts: a preset voice id; svc-music: passed on as given, if at all. */
  voice: string | undefined;
  format: AudioFormat;
  speed: number;
  instructions: string | undefined;
  /** svc-music only: seconds asked for. */
  duration: number | undefined;
}

export interface SpeechCall {
  kind: 'speech' | 'music';
  model: RoutedModel;
  request: SpeechRequest;
  /** The embedded engine, when svc-tts has no upstream. */
  engine: SpeechEngine | null;
  audio: EncodedAudio | null;
  inputTokens: number | null;
  /** The longest it may be: the requested duration, or the bound from the text. What was reserved, and where it is cut off. */
  boundSeconds: number;
}

export class SpeechExecutor implements Executor<SpeechCall> {
  readonly #registry: ModelRegistry;
  readonly #media: MediaService;
  readonly #tokensPerSecond: number;
  readonly #maxMusicSeconds: number;

  constructor(config: Config, registry: ModelRegistry, media: MediaService) {
    this.#registry = registry;
    this.#media = media;
    this.#tokensPerSecond = config.media.audioTokensPerSecond;
    this.#maxMusicSeconds = config.media.maxMusicSeconds;
  }

  /** Validates a request body and routes it; `unknownModel` is the 404 for an id that does not exist. */
  plan(raw: unknown, unknownModel: (id: string) => AppError): TurnPlan<SpeechCall> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new AppError('invalid_request', 'The request body must be a JSON object.');
    const body = raw as Record<string, unknown>;
    for (const field in body) {
      if (!fields.has(field)) throw invalid(field, `Unrecognized request argument supplied: ${field}.`);
    }
    if (typeof body.model !== 'string' || body.model === '') throw invalid('model', `model is required: ${speechModelId} (speech) or ${musicModelId} (songs).`);
    const model = this.#registry.get(body.model);
    if (!model) throw unknownModel(body.model);
    const kind = model.resolvedId === speechModelId ? 'speech' : model.resolvedId === musicModelId ? 'music' : null;
    if (!kind) throw invalid('model', `${body.model} does not make audio; use ${speechModelId} (speech) or ${musicModelId} (songs) on this endpoint.`);
    const request = this.#check(body, kind);

    const engine = model.deployments.length === 0 && kind === 'speech' ? this.#media.speech : null;
    if (model.deployments.length === 0 && !engine) {
      const what = kind === 'music' ? 'a music server' : 'a speech server (media.tts.engine is none)';
      throw new AppError(
        'upstream_unavailable',
        `${model.id} has no upstream: set SVC_UPSTREAM_URL to ${what} that answers POST /audio/speech, or add models.${model.id}.deployments in the config file.`,
        { stage: 'routing', debug: { productModel: model.id } },
      );
    }
    const seconds = kind === 'music' ? request.duration! : speechBoundSeconds([...request.input].length, request.speed);
    return {
      executor: this,
      product: kind,
      model,
      stream: true,
      worstCase: { inputTokens: Buffer.byteLength(textOf(request)), outputTokens: audioOutputTokens(this.#tokensPerSecond, seconds) },
      call: { kind, model, request, engine, audio: null, inputTokens: null, boundSeconds: seconds },
    };
  }

  #check(body: Record<string, unknown>, kind: 'speech' | 'music'): SpeechRequest {
    const input = body.input;
    if (typeof input !== 'string' || input.trim() === '') {
      throw invalid('input', kind === 'music' ? 'input must describe the song (style, mood, lyrics).' : 'input must be non-empty text to speak.');
    }
    if ([...input].length > maxSpeechInputChars) throw invalid('input', `input is longer than ${maxSpeechInputChars} characters; split it into several requests.`);

    let voice: string | undefined;
    if (kind === 'speech') {
      if (typeof body.voice !== 'string' || !findVoice(body.voice)) {
        throw invalid('voice', `voice must be one of: ${speechVoices.map((v) => v.id).join(', ')} (GET /v1/audio/voices lists them).`);
      }
      voice = body.voice;
    } else if (body.voice !== undefined && body.voice !== null) {
      if (typeof body.voice !== 'string' || body.voice.length > 64) throw invalid('voice', 'voice must be a string of at most 64 characters.');
      voice = body.voice;
    }

    const format = body.response_format ?? 'mp3';
    if (typeof format !== 'string' || !isAudioFormat(format)) {
      throw invalid('response_format', `response_format ${JSON.stringify(format)} is not available here; use one of: ${audioFormats.join(', ')}.`);
    }
    const speed = body.speed ?? 1;
    if (typeof speed !== 'number' || !Number.isFinite(speed) || speed < 0.25 || speed > 4) throw invalid('speed', 'speed must be a number from 0.25 to 4.');

    const instructions = body.instructions ?? undefined;
    if (instructions !== undefined && (typeof instructions !== 'string' || [...instructions].length > maxSpeechInputChars)) {
      throw invalid('instructions', `instructions must be text of at most ${maxSpeechInputChars} characters.`);
    }

    let duration: number | undefined;
    if (kind === 'music') {
      duration = (body.duration ?? defaultMusicSeconds) as number;
      if (typeof duration !== 'number' || !Number.isFinite(duration) || duration < 1 || duration > this.#maxMusicSeconds) {
        throw invalid('duration', `duration must be a number of seconds from 1 to ${this.#maxMusicSeconds}.`);
      }
    } else if (body.duration !== undefined && body.duration !== null) {
      throw invalid('duration', `duration is for ${musicModelId} only; speech lasts as long as its text.`);
    }
    if (body.stream_format !== undefined && body.stream_format !== null && body.stream_format !== 'audio') {
      throw invalid('stream_format', 'stream_format must be audio: the audio is streamed as raw bytes.');
    }
    return { input, voice, format, speed, instructions: instructions as string | undefined, duration };
  }

  async execute(turn: Turn, call: SpeechCall, exchange: Exchange): Promise<void> {
    const { signal } = exchange;
    const audio = call.engine ? this.#speak(turn, call) : await this.#fromUpstreamOrEngine(turn, call, exchange);
    call.audio = audio;
    const stop = () => audio.body.destroy();
    signal.once('abort', stop);
    try {
      try {
        await audio.started();
      } catch (error) {
        if (signal.aborted) throw error;
        if (error instanceof UnreadableAudio) throw unreadable(error, call.request.format);
        throw classifyUpstreamError(error, call.engine ? 'The speech engine' : 'The model server');
      }
      await this.#relay(turn, call, exchange, audio);
    } finally {
      signal.off('abort', stop);
      audio.body.destroy();
      if (turn.output) turn.metered = await this.#metered(turn, call);
    }
  }

  /**
   * What has been delivered so far, for the crash checkpoints of a long reply: the seconds counted so far,
   * the text by `quickPromptTokens` until the tokenizer has counted it. Counters only: asked every second.
   */
  progress(turn: Turn, call: SpeechCall): Metered {
    const inputTokens = call.inputTokens ?? Math.min(quickPromptTokens([{ content: textOf(call.request) }]), turn.worstCase.inputTokens);
    return this.#delivered(turn, inputTokens, call.audio?.seconds ?? 0);
  }

  #speak(turn: Turn, call: SpeechCall): EncodedAudio {
    const { input, voice, speed, format } = call.request;
    turn.deployment = 'embedded';
    turn.upstreamStatus = null;
    return call.engine!.speak({ input, voice: voice!, speed, format, maxSeconds: call.boundSeconds });
  }

  /**
   * The quick-start upstream (`SVC_UPSTREAM_URL`) is often a chat-only server (vLLM, llama.cpp) that has no
   * `/audio/speech`: when it answers 404 for svc-tts, the embedded engine speaks instead, as it would with
   * no upstream at all. A deployment configured for svc-tts is never second-guessed.
   */
  async #fromUpstreamOrEngine(turn: Turn, call: SpeechCall, exchange: Exchange): Promise<EncodedAudio> {
    try {
      return await this.#fromUpstream(turn, call, exchange);
    } catch (error) {
      const engine = this.#media.speech;
      if (!(error instanceof UpstreamFailure && error.upstreamStatus === 404 && call.kind === 'speech' && call.model.quickStart && engine)) throw error;
      call.engine = engine;
      return this.#speak(turn, call);
    }
  }

  async #fromUpstream(turn: Turn, call: SpeechCall, exchange: Exchange): Promise<EncodedAudio> {
    const { input, voice, format, speed, instructions, duration } = call.request;
    const response = await dispatch(turn, call.model.deployments, exchange.signal, {
      endpoint: '/audio/speech',
      accept: 'audio/*, application/octet-stream',
      body: (deployment) => JSON.stringify({ model: deployment.model, input, voice, response_format: format, speed, instructions, duration }),
    });
    const header = response.headers['content-type'];
    const sent = formatOf(Array.isArray(header) ? header[0] : header);
    if (sent === 'unsupported') {
      response.body.destroy();
      throw new UpstreamFailure('upstream_error', `The model server answered in ${String(header)}, which svc cannot convert to ${format}.`, 200);
    }
    return transcodeAudio(response.body as AsyncIterable<Uint8Array>, sent ?? format, format, { maxSeconds: call.boundSeconds });
  }

  async #relay(turn: Turn, call: SpeechCall, exchange: Exchange, audio: EncodedAudio): Promise<void> {
    const reply = exchange.reply!;
    const raw = reply.raw;
    writeRawHead(reply, 200, {
      'content-type': audio.contentType,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-svc-request-id': turn.traceId,
      'x-request-id': turn.traceId,
      // Until the first audio: the rest comes at the engine's or upstream's own pace.
      'server-timing': serverTiming(turn, performance.now() - turn.upstreamFrom),
      ...(turn.rate ? rateLimitHeaders(turn.rate) : {}),
    });
    turn.output = true;
    let firstBytes = exchange.firstToken;
    try {
      for await (const bytes of audio.body as AsyncIterable<Buffer>) {
        const written = raw.write(bytes);
        if (firstBytes) {
          firstBytes();
          firstBytes = undefined;
        }
        if (!written) await drained(raw, turn.deadline);
        if (exchange.signal.aborted) break;
        if (performance.now() > turn.deadline) throw new UpstreamFailure('upstream_timeout', 'The audio took longer than a turn may last.', 200);
      }
    } catch (error) {
      if (exchange.signal.aborted) throw error;
      // Too late for a JSON error: the body is cut short, and billed for what was delivered.
      turn.status = 'upstream_failed';
      turn.failure = { code: classifyUpstreamError(error).code, stage: 'stream' };
      raw.destroy();
      return;
    }
    if (exchange.signal.aborted) throw new DOMException('client went away', 'AbortError');
    raw.end();
  }

  /** Text tokens in; seconds delivered out (never more than was reserved: the audio is cut off there). */
  async #metered(turn: Turn, call: SpeechCall): Promise<Metered> {
    call.inputTokens ??= Math.min(new TokenEstimate(await tokenizer()).count(textOf(call.request)), turn.worstCase.inputTokens);
    return this.#delivered(turn, call.inputTokens, call.audio?.seconds ?? 0);
  }

  #delivered(turn: Turn, inputTokens: number, seconds: number): Metered {
    const quantity = Math.round(seconds * 1000) / 1000;
    return {
      inputTokens,
      outputTokens: Math.min(audioOutputTokens(this.#tokensPerSecond, quantity), turn.worstCase.outputTokens),
      unit: { kind: 'audio_second', quantity },
    };
  }
}

/** Audio that is not the format it was said to be is never relayed: it cannot be counted, nor cut off. */
function unreadable(error: UnreadableAudio, format: AudioFormat): UpstreamFailure {
  return new UpstreamFailure('upstream_error', `The model server's audio is not ${format}: ${error.message}.`, 200, error, {
    clientMessage: `The model server sent audio that is not readable as ${format} (${error.message}), so svc could not measure it and sent none of it. Nothing was billed.`,
  });
}

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

/** The text the model reads: the input, and the instructions on how to read it. */
function textOf(request: SpeechRequest): string {
  return request.instructions ? `${request.instructions}\n${request.input}` : request.input;
}

/** The format of an upstream's `content-type`; null when it names none (then it is the one asked for). */
function formatOf(contentType: string | undefined): AudioFormat | 'unsupported' | null {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (!type || type === 'application/octet-stream' || type === 'binary/octet-stream') return null;
  const formats: Record<string, AudioFormat> = {
    'audio/mpeg': 'mp3',
    'audio/mp3': 'mp3',
    'audio/wav': 'wav',
    'audio/x-wav': 'wav',
    'audio/wave': 'wav',
    'audio/ogg': 'opus',
    'audio/opus': 'opus',
    'audio/flac': 'flac',
    'audio/x-flac': 'flac',
    'audio/pcm': 'pcm',
    'audio/l16': 'pcm',
  };
  return formats[type] ?? 'unsupported';
}

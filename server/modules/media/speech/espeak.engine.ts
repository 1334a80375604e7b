/**
 * The embedded speech engine: espeak-ng compiled to WebAssembly (npm `@echogarden/espeak-ng-emscripten`,
 * so `npm ci && npm start` can speak with nothing else installed), run in one worker thread
 * (espeak.worker.ts) that is started on first use and kept. Requests queue there in arrival order.
 *
 * Text handling: the input is XML-escaped (espeak reads SSML, and a `<break time="…">` in user text
 * could ask for hours of silence); text in Han characters spoken by a non-Chinese voice is read in
 * Mandarin with that voice's variant, rather than spelled out as "Chinese letter …".
 * Speed: espeak's rate is 175 words per minute × speed, within the 80–450 it can do (so 0.25 and 4
 * are as slow and as fast as espeak goes).
 */
import { Worker } from 'node:worker_threads';
import { EncodedAudio } from '../audio/audio.ts';
import type { PcmChunk } from '../audio/pcm.ts';
import { checkSpeechRequest, type SpeechEngine, type SpeechRequest } from './speech.engine.ts';
import type { SpeakJob } from './espeak.worker.ts';
import { listVoices, type EspeakPreset, type SpeechVoice } from './speech.voices.ts';

const defaultWordsPerMinute = 175;
const hanPattern = /\p{Script=Han}/u;

type WorkerMessage =
  | { kind: 'ready'; sampleRate: number }
  | { kind: 'fatal'; message: string }
  | { id: number; kind: 'audio'; samples: Int16Array }
  | { id: number; kind: 'done' }
  | { id: number; kind: 'error'; message: string };

interface Job {
  push(samples: Int16Array): void;
  end(error?: Error): void;
}

export class EspeakEngine implements SpeechEngine {
  private worker: Worker | null = null;
  private ready: Promise<number> | null = null;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;

  listVoices(): SpeechVoice[] {
    return listVoices();
  }

  speak(request: SpeechRequest): EncodedAudio {
    const { input, voice, speed, format } = checkSpeechRequest(request);
    return EncodedAudio.fromPcm(this.synthesize(input, voice, speed), format, { maxSeconds: request.maxSeconds });
  }

  /** Raw samples at espeak's own rate (22,050 Hz), chunk by chunk as they are synthesised. */
  async *synthesize(text: string, voice: EspeakPreset, speed: number): AsyncIterable<PcmChunk> {
    const sampleRate = await this.start();
    const queue: Int16Array[] = [];
    let finished = false;
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    const id = this.nextId++;
    const cancel = new SharedArrayBuffer(4);
    this.jobs.set(id, {
      push: (samples) => {
        queue.push(samples);
        wake?.();
      },
      end: (error) => {
        finished = true;
        failure = error ?? null;
        wake?.();
      },
    });
    const job: SpeakJob = { id, text: espeakText(text), voice: espeakVoice(voice, text), rate: espeakRate(speed), pitch: voice.pitch, cancel };
    this.worker!.postMessage(job);
    try {
      for (;;) {
        const samples = queue.shift();
        if (samples) yield { samples, sampleRate };
        else if (failure) throw failure;
        else if (finished) return;
        else await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      // The reader went away (client disconnect) or synthesis ended: stop the worker on this job.
      Atomics.store(new Int32Array(cancel), 0, 1);
      this.jobs.delete(id);
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.ready = null;
    this.failAll(new Error('speech engine closed'));
    await worker?.terminate();
  }

  /** Starts the worker once; resolves with espeak's sample rate when the WebAssembly module is loaded. */
  private start(): Promise<number> {
    if (this.ready) return this.ready;
    const worker = new Worker(new URL('./espeak.worker.ts', import.meta.url));
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<number>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.kind === 'ready') return resolve(message.sampleRate);
        if (message.kind === 'fatal') return reject(new Error(message.message));
        const job = this.jobs.get(message.id);
        if (message.kind === 'audio') job?.push(message.samples);
        else if (message.kind === 'done') job?.end();
        else job?.end(new Error(`speech synthesis failed: ${message.message}`));
      });
      const crashed = (error: Error) => {
        reject(error);
        if (this.worker === worker) {
          // Next request starts a fresh worker.
          this.worker = null;
          this.ready = null;
        }
        this.failAll(error);
      };
      worker.on('error', crashed);
      worker.on('exit', (code) => crashed(new Error(`speech engine stopped (exit code ${code})`)));
    });
    // A failed start is reported to each caller; no unhandled rejection here.
    this.ready.catch(() => undefined);
    return this.ready;
  }

  private failAll(error: Error): void {
    for (const job of this.jobs.values()) job.end(error);
    this.jobs.clear();
  }
}

function espeakText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function espeakVoice(voice: EspeakPreset, text: string): string {
  const language = voice.language.startsWith('zh') || !hanPattern.test(text) ? voice.espeak : 'cmn';
  return `${language}+${voice.variant}`;
}

function espeakRate(speed: number): number {
  return Math.round(Math.min(450, Math.max(80, defaultWordsPerMinute * speed)));
}

/**
 * The espeak-ng WebAssembly build, in a worker thread: synthesis is synchronous C code (a long text takes
 * seconds of CPU) and must not block the server's event loop. One job at a time, in arrival order;
 * each chunk of samples is posted as espeak produces it (~100 ms of audio), so the reply streams. A job
 * is cancelled through a shared flag that the synthesis callback reads between chunks.
 *
 * Messages in: `{ id, text, voice, rate, pitch, cancel: SharedArrayBuffer }`.
 * Messages out: `{ kind: 'ready', sampleRate }`, `{ kind: 'fatal', message }`, and per job
 * `{ id, kind: 'audio', samples }`, `{ id, kind: 'done' }`, `{ id, kind: 'error', message }`.
 */
import { parentPort } from 'node:worker_threads';
import initEspeak from '@echogarden/espeak-ng-emscripten';

export interface SpeakJob {
  id: number;
  text: string;
  /** espeak voice name, with its variant: `en-us+f3`. */
  voice: string;
  /** Words per minute, 80–450. */
  rate: number;
  /** 0–99. */
  pitch: number;
  cancel: SharedArrayBuffer;
}

interface EspeakWorker {
  set_voice(name: string): number;
  set_rate(wpm: number): void;
  set_pitch(pitch: number): void;
  set_range(range: number): void;
  synthesize(text: string, callback: (samples: Int16Array | null, events: unknown[]) => boolean): void;
  samplerate: number;
}

const port = parentPort!;

try {
  const module = await initEspeak();
  const espeak = new module.eSpeakNGWorker() as EspeakWorker;
  port.postMessage({ kind: 'ready', sampleRate: espeak.samplerate });
  port.on('message', (job: SpeakJob) => {
    const cancelled = new Int32Array(job.cancel);
    if (Atomics.load(cancelled, 0) === 1) return port.postMessage({ id: job.id, kind: 'done' });
    try {
      if (espeak.set_voice(job.voice) !== 0) throw new Error(`espeak-ng has no voice ${job.voice}`);
      espeak.set_rate(job.rate);
      espeak.set_pitch(job.pitch);
      espeak.synthesize(job.text, (samples) => {
        if (samples && samples.length > 0) {
          const copy = samples.slice();
          port.postMessage({ id: job.id, kind: 'audio', samples: copy }, [copy.buffer]);
        }
        return Atomics.load(cancelled, 0) === 1; // true stops synthesis
      });
      port.postMessage({ id: job.id, kind: 'done' });
    } catch (error) {
      port.postMessage({ id: job.id, kind: 'error', message: (error as Error).message });
    }
  });
} catch (error) {
  port.postMessage({ kind: 'fatal', message: `espeak-ng failed to load: ${(error as Error).message}` });
}

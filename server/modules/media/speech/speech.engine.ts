/**
 * What speaks for `svc-tts` when it has no upstream. `speak` checks the request (OpenAI's rules: input up
 * to 4,096 characters, speed 0.25–4, a known voice and format) and returns the audio as a stream that
 * starts before synthesis has finished.
 */
import { AppError } from '../../../errors/app-error.ts';
import type { EncodedAudio } from '../audio/audio.ts';
import { audioFormats, isAudioFormat, type AudioFormat } from '../audio/format.ts';
import { findVoice, speechVoices, type EspeakPreset, type SpeechVoice } from './speech.voices.ts';

export const maxSpeechInputChars = 4096;

export interface SpeechRequest {
  input: string;
  /** A preset voice id (`listVoices()`). */
  voice: string;
  /** 0.25–4, default 1. */
  speed?: number;
  /** Default mp3. */
  format?: string;
  /** Audio beyond this is cut off (the seconds reserved for it). */
  maxSeconds?: number;
}

export interface SpeechEngine {
  listVoices(): SpeechVoice[];
  /** Throws `AppError('invalid_request')` naming the field for a bad request; synthesis errors surface on `body`. */
  speak(request: SpeechRequest): EncodedAudio;
  close(): Promise<void>;
}

export interface CheckedSpeech {
  input: string;
  voice: EspeakPreset;
  speed: number;
  format: AudioFormat;
}

export function checkSpeechRequest(request: SpeechRequest): CheckedSpeech {
  const input = typeof request.input === 'string' ? request.input : '';
  if (input.trim() === '') throw new AppError('invalid_request', 'input must be non-empty text to speak.', { param: 'input' });
  if ([...input].length > maxSpeechInputChars) {
    throw new AppError('invalid_request', `input is longer than ${maxSpeechInputChars} characters; split it into several requests.`, { param: 'input' });
  }
  const voice = findVoice(request.voice);
  if (!voice) {
    throw new AppError('invalid_request', `Unknown voice ${JSON.stringify(request.voice)}; one of: ${speechVoices.map((v) => v.id).join(', ')}.`, { param: 'voice' });
  }
  const speed = request.speed ?? 1;
  if (typeof speed !== 'number' || !Number.isFinite(speed) || speed < 0.25 || speed > 4) {
    throw new AppError('invalid_request', 'speed must be a number from 0.25 to 4.', { param: 'speed' });
  }
  const format = request.format ?? 'mp3';
  if (!isAudioFormat(format)) {
    throw new AppError('invalid_request', `response_format ${JSON.stringify(format)} is not available here; use one of: ${audioFormats.join(', ')}.`, {
      param: 'response_format',
    });
  }
  return { input, voice, speed, format };
}

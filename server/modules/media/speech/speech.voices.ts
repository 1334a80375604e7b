/**
 * The preset voices of `svc-tts` (`GET /v1/audio/voices`): OpenAI's voice names, so clients written for
 * OpenAI work unchanged, plus Mandarin and Cantonese voices. Each maps to an espeak-ng voice, a variant
 * (espeak's `+f3`, `+m7`, …) and a base pitch for the embedded engine; an upstream gets the id as is.
 */

export type VoiceGender = 'female' | 'male' | 'neutral';

export interface SpeechVoice {
  id: string;
  name: string;
  /** BCP 47 tag of the language the voice speaks. */
  language: string;
  gender: VoiceGender;
  description: string;
}

export interface EspeakPreset extends SpeechVoice {
  /** espeak-ng language voice. */
  espeak: string;
  /** espeak-ng variant (voices/!v), which shapes timbre and pitch range. */
  variant: string;
  /** 0–99, espeak's default 50. */
  pitch: number;
}

const preset = (voice: EspeakPreset) => voice;

export const speechVoices: readonly EspeakPreset[] = [
  preset({ id: 'alloy', name: 'Alloy', language: 'en-US', gender: 'neutral', description: 'Balanced and even; American English.', espeak: 'en-us', variant: 'm2', pitch: 58 }),
  preset({ id: 'ash', name: 'Ash', language: 'en-US', gender: 'male', description: 'Warm and steady; American English.', espeak: 'en-us', variant: 'm3', pitch: 42 }),
  preset({ id: 'ballad', name: 'Ballad', language: 'en-GB', gender: 'male', description: 'Soft-spoken; British English.', espeak: 'en-gb-x-rp', variant: 'm1', pitch: 48 }),
  preset({ id: 'coral', name: 'Coral', language: 'en-US', gender: 'female', description: 'Bright and clear; American English.', espeak: 'en-us', variant: 'f3', pitch: 58 }),
  preset({ id: 'echo', name: 'Echo', language: 'en-US', gender: 'male', description: 'Crisp and direct; American English.', espeak: 'en-us', variant: 'm1', pitch: 50 }),
  preset({ id: 'fable', name: 'Fable', language: 'en-GB', gender: 'neutral', description: 'An expressive storyteller; British English.', espeak: 'en-gb-x-rp', variant: 'f2', pitch: 52 }),
  preset({ id: 'nova', name: 'Nova', language: 'en-US', gender: 'female', description: 'Friendly and upbeat; American English.', espeak: 'en-us', variant: 'f4', pitch: 64 }),
  preset({ id: 'onyx', name: 'Onyx', language: 'en-US', gender: 'male', description: 'Deep and authoritative; American English.', espeak: 'en-us', variant: 'm7', pitch: 30 }),
  preset({ id: 'sage', name: 'Sage', language: 'en-US', gender: 'female', description: 'Calm and measured; American English.', espeak: 'en-us', variant: 'f2', pitch: 48 }),
  preset({ id: 'shimmer', name: 'Shimmer', language: 'en-US', gender: 'female', description: 'Light and airy; American English.', espeak: 'en-us', variant: 'f5', pitch: 70 }),
  preset({ id: 'verse', name: 'Verse', language: 'en-US', gender: 'male', description: 'Lively and versatile; American English.', espeak: 'en-us', variant: 'm4', pitch: 55 }),
  preset({ id: 'zh-female', name: '晓梅 (Xiaomei)', language: 'zh-CN', gender: 'female', description: '普通话女声 — Mandarin Chinese, female.', espeak: 'cmn', variant: 'f3', pitch: 55 }),
  preset({ id: 'zh-male', name: '晓雷 (Xiaolei)', language: 'zh-CN', gender: 'male', description: '普通话男声 — Mandarin Chinese, male.', espeak: 'cmn', variant: 'm3', pitch: 45 }),
  preset({ id: 'yue-female', name: '嘉欣 (Kaiyan)', language: 'zh-HK', gender: 'female', description: '粵語女聲 — Cantonese, female.', espeak: 'yue', variant: 'f2', pitch: 55 }),
];

/** The public fields only, in the order above. */
export function listVoices(): SpeechVoice[] {
  return speechVoices.map(({ id, name, language, gender, description }) => ({ id, name, language, gender, description }));
}

export function findVoice(id: string): EspeakPreset | undefined {
  return speechVoices.find((voice) => voice.id === id);
}

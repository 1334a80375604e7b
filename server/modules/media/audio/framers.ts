/** Picks the framer of a format; the framers sit above `framing.ts`, which holds what they share. */
import type { AudioFormat } from './format.ts';
import { FlacFramer } from './flac.framer.ts';
import type { AudioFramer } from './framing.ts';
import { Mp3Framer } from './mp3.framer.ts';
import { OggOpusFramer } from './opus.framer.ts';
import { WavFramer } from './wav.framer.ts';

/** A framer for bytes in `format`; `maxSeconds` lets a header that announces a longer length be corrected. */
export function createFramer(format: Exclude<AudioFormat, 'pcm'>, maxSeconds: number): AudioFramer {
  switch (format) {
    case 'mp3':
      return new Mp3Framer();
    case 'wav':
      return new WavFramer(maxSeconds);
    case 'flac':
      return new FlacFramer(maxSeconds);
    case 'opus':
      return new OggOpusFramer();
  }
}

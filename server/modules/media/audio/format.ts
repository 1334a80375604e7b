/** The audio formats svc reads and writes (`response_format` of speech, stored media). */
export const audioFormats = ['mp3', 'opus', 'flac', 'wav', 'pcm'] as const;
export type AudioFormat = (typeof audioFormats)[number];

export function isAudioFormat(value: string): value is AudioFormat {
  return (audioFormats as readonly string[]).includes(value);
}

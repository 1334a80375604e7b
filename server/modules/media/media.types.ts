/**
 * The kinds of file svc stores and serves. The served content type always comes from this table, never
 * from an upstream or a caller: only images and audio a browser will not run as a page (no SVG, no HTML),
 * so a capability URL on our origin can never carry script.
 */
export const mediaTypes = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  // Ogg Opus file (RFC 7845), which is what `opus` responses are; `audio/ogg` is what <audio> plays.
  opus: 'audio/ogg; codecs=opus',
  flac: 'audio/flac',
  aac: 'audio/aac',
  // Raw signed 16-bit little-endian mono at 24 kHz, as OpenAI's `pcm` response format.
  pcm: 'audio/pcm',
} as const;

export type MediaExt = keyof typeof mediaTypes;

export function isMediaExt(value: string): value is MediaExt {
  return Object.hasOwn(mediaTypes, value);
}

/** The image type from the bytes themselves (upstreams send `b64_json` without a type): the magic numbers. */
export function sniffImage(bytes: Uint8Array): { ext: MediaExt; contentType: string } | null {
  const starts = (...magic: number[]) => magic.every((byte, index) => bytes[index] === byte);
  const ascii = (offset: number, text: string) => [...text].every((char, index) => bytes[offset + index] === char.charCodeAt(0));
  let ext: MediaExt | null = null;
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) ext = 'png';
  else if (starts(0xff, 0xd8, 0xff)) ext = 'jpg';
  else if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) ext = 'webp';
  else if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) ext = 'gif';
  return ext ? { ext, contentType: mediaTypes[ext] } : null;
}

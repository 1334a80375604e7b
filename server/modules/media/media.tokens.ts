/**
 * How generated media is counted as output tokens (DESIGN §8.5), for the executors to settle with:
 * an image is `media.imageOutputTokens` per 1024×1024, scaled by its area; audio is
 * `media.audioTokensPerSecond` per second. Rounded up: a started second or pixel block is counted.
 */

const referenceArea = 1024 * 1024;

export function imageOutputTokens(tokensPer1024Square: number, width: number, height: number, count = 1): number {
  return Math.ceil((tokensPer1024Square * width * height) / referenceArea) * count;
}

export function audioOutputTokens(tokensPerSecond: number, seconds: number): number {
  // The epsilon keeps float noise in a summed length (2.0000000001 s) from costing a whole extra second.
  return Math.max(0, Math.ceil(tokensPerSecond * seconds - 1e-6));
}

/** `"1024x1536"` (OpenAI's `size`) → pixels, or null when it is not `<width>x<height>`. */
export function parseImageSize(size: string): { width: number; height: number } | null {
  const match = /^(\d{2,5})x(\d{2,5})$/.exec(size);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : null;
}

import { describe, expect, it } from 'vitest';
import { audioOutputTokens, imageOutputTokens, parseImageSize } from '../../../server/modules/media/media.tokens.ts';

describe('media output tokens', () => {
  it('images: per 1024×1024, scaled by area, times the count', () => {
    expect(imageOutputTokens(1000, 1024, 1024)).toBe(1000);
    expect(imageOutputTokens(1000, 1024, 1536)).toBe(1500);
    expect(imageOutputTokens(1000, 512, 512, 4)).toBe(1000);
    expect(imageOutputTokens(1000, 256, 255)).toBe(63); // 62.26… rounded up
  });

  it('audio: per second, a started one counted', () => {
    expect(audioOutputTokens(25, 30)).toBe(750);
    expect(audioOutputTokens(25, 2.01)).toBe(51);
    expect(audioOutputTokens(25, 0)).toBe(0);
    expect(audioOutputTokens(25, 0.1 + 0.2)).toBe(8);
  });

  it('sizes', () => {
    expect(parseImageSize('1024x1792')).toEqual({ width: 1024, height: 1792 });
    expect(parseImageSize('auto')).toBeNull();
    expect(parseImageSize('1024X1024')).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import type { AppError } from '../../../server/errors/app-error.ts';
import { altText, promptOf } from '../../../server/modules/media/image.executor.ts';

describe('svc-img prompt and alt text', () => {
  it('takes the text of the last user message, skipping image parts and later assistant turns', () => {
    expect(promptOf([{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'second' }])).toBe('second');
    expect(
      promptOf([
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } }, { type: 'text', text: 'like this, in red' }] },
        { role: 'assistant', content: 'which red?' },
      ]),
    ).toBe('like this, in red');
    expect(() => promptOf([{ role: 'system', content: 'hi' }])).toThrow(/needs a user message/);
    expect(() => promptOf([{ role: 'user', content: '   ' }])).toThrow(/describe the image/);
    expect((() => {
      try {
        promptOf([{ role: 'user', content: 'x'.repeat(32_001) }]);
      } catch (error) {
        return (error as AppError).options.param;
      }
    })()).toBe('messages[0].content');
  });

  it('makes one short line that cannot break the Markdown link', () => {
    expect(altText('a cat')).toBe('a cat');
    expect(altText('a [bracketed] cat\nwith a\\backslash')).toBe('a \\[bracketed\\] cat with a\\\\backslash');
    const long = altText('A very detailed oil painting of a lighthouse on a rocky coast at dusk, with waves crashing and gulls circling overhead');
    expect(long).toBe('A very detailed oil painting of a lighthouse on a rocky coast at dusk, with…');
    expect([...altText('猫'.repeat(200))]).toHaveLength(81);
    expect(altText(`${'x'.repeat(79)}]`)).toBe(`${'x'.repeat(79)}\\]`);
  });
});

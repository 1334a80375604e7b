/**
 * Token estimates (when the upstream gave no usage, e.g. the client hung up) run on the event loop, and
 * BPE costs grow with the square of one unbroken piece: the estimate must stay cheap whatever the text,
 * without losing accuracy on ordinary text.
 */
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import { estimateChatUsage, type ChatCall } from '../../../server/modules/gateway/chat.executor.ts';
import { promptTokens, quickPromptTokens, TokenEstimate } from '../../../server/modules/gateway/token-estimate.ts';

function call(prompt: string, produced: string): ChatCall {
  return {
    body: { messages: [{ role: 'user', content: prompt }] },
    produced: [produced],
    rewriter: null,
    promptBound: Buffer.byteLength(prompt) + 100,
    outputBound: 1_000_000,
  } as unknown as ChatCall;
}

function randomText(length: number, alphabet: string): string {
  let text = '';
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(Math.random() * alphabet.length)];
  return text;
}

describe('estimateChatUsage', () => {
  it('counts ordinary text exactly', async () => {
    const prompt = 'The quick brown fox jumps over the lazy dog. 敏捷的棕色狐狸跳过了懒狗。 '.repeat(50);
    const answer = 'Sure: here is a short answer, with some code `const x = 1;` and a list.\n- one\n- two\n';
    const usage = await estimateChatUsage(call(prompt, answer));
    expect(usage.prompt_tokens).toBe(3 + 4 + countTokens(prompt));
    expect(usage.completion_tokens).toBe(countTokens(answer));
  });

  it('stays fast on a huge prompt with no breaks, never billing below its tokens', async () => {
    const prompt = randomText(400_000, 'abcdefghijklmnopqrstuvwxyz的一是不了人我在有他这为之大来以个中上们');
    const answer = 'x'.repeat(50_000);
    await estimateChatUsage(call('warm up the tokenizer', ''));
    const started = performance.now();
    const usage = await estimateChatUsage(call(prompt, answer));
    expect(performance.now() - started).toBeLessThan(1500);
    // Never below what a sample of the text really costs, scaled up.
    expect(usage.prompt_tokens).toBeGreaterThanOrEqual(countTokens(prompt.slice(0, 4000)) * 100 * 0.9);
    expect(usage.completion_tokens).toBeGreaterThanOrEqual(50_000 / 8);
  }, 120_000);

  it('the quick prompt estimate of crash checkpoints: near the count for English, below it for code and other scripts', () => {
    const exact = (text: string) => promptTokens([{ content: text }], [new TokenEstimate(countTokens).count(text)]);
    const quick = (text: string) => quickPromptTokens([{ content: text }]);
    const english = 'The quick brown fox jumps over the lazy dog. Sure: here is a short answer, with a list.\n- one\n- two\n'.repeat(40);
    expect(quick(english) / exact(english)).toBeGreaterThan(0.85);
    expect(quick(english) / exact(english)).toBeLessThan(1.15);
    for (const text of ['敏捷的棕色狐狸跳过了懒狗。'.repeat(50), 'function add(a, b) {\n  return a + b;\n}\n'.repeat(30), 'Съешь же ещё этих мягких французских булок. '.repeat(30)]) {
      expect(quick(text)).toBeLessThanOrEqual(exact(text));
    }
  });
});

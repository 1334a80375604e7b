/**
 * Token estimates (when the upstream gave no usage, e.g. the client hung up) run on the event loop, and
 * BPE costs grow with the square of one unbroken piece: the estimate must stay cheap whatever the text,
 * without losing accuracy on ordinary text.
 */
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { ChatGateway } from '../../../server/modules/gateway/chat.gateway.ts';
import type { Turn } from '../../../server/modules/gateway/chat.pipeline.ts';
import { ModelRegistry } from '../../../server/modules/model/model.registry.ts';

const config = parseConfig({});
const gateway = new ChatGateway({
  config,
  authenticate: () => Promise.reject(new Error('not used')),
  registry: new ModelRegistry(config),
  usage: {} as ChatGateway['usage'],
  settlement: {} as ChatGateway['settlement'],
  log: {} as ChatGateway['log'],
});

function turn(prompt: string, produced: string): Turn {
  return {
    body: { messages: [{ role: 'user', content: prompt }] },
    produced: [produced],
    rewriter: null,
    promptBound: Buffer.byteLength(prompt) + 100,
    outputBound: 1_000_000,
  } as unknown as Turn;
}

function randomText(length: number, alphabet: string): string {
  let text = '';
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(Math.random() * alphabet.length)];
  return text;
}

describe('ChatGateway.estimateUsage', () => {
  it('counts ordinary text exactly', async () => {
    const prompt = 'The quick brown fox jumps over the lazy dog. 敏捷的棕色狐狸跳过了懒狗。 '.repeat(50);
    const answer = 'Sure: here is a short answer, with some code `const x = 1;` and a list.\n- one\n- two\n';
    const usage = await gateway.estimateUsage(turn(prompt, answer));
    expect(usage.prompt_tokens).toBe(3 + 4 + countTokens(prompt));
    expect(usage.completion_tokens).toBe(countTokens(answer));
  });

  it('stays fast on a huge prompt with no breaks, never billing below its tokens', async () => {
    const prompt = randomText(400_000, 'abcdefghijklmnopqrstuvwxyz的一是不了人我在有他这为之大来以个中上们');
    const answer = 'x'.repeat(50_000);
    await gateway.estimateUsage(turn('warm up the tokenizer', ''));
    const started = performance.now();
    const usage = await gateway.estimateUsage(turn(prompt, answer));
    expect(performance.now() - started).toBeLessThan(1500);
    // Never below what a sample of the text really costs, scaled up.
    expect(usage.prompt_tokens).toBeGreaterThanOrEqual(countTokens(prompt.slice(0, 4000)) * 100 * 0.9);
    expect(usage.completion_tokens).toBeGreaterThanOrEqual(50_000 / 8);
  }, 120_000);
});

/**
 * Token counts for billing when the upstream reported none (it omitted usage, or the client hung up first).
 * Settlement's counts run in the counting worker (token-count.ts), the rest and its fallback on the event
 * loop; either way one thread, and the tokenizer's BPE is slow (~10 µs a token) and quadratic in the length
 * of one unbroken piece — a 1 MiB prompt of one "word" would stall it for minutes. So the work
 * is bounded: a run of one character class longer than SLICE is counted in slices (exact for ordinary
 * text, which never has such runs), and past a budget of characters the rest is billed at one token per
 * UTF-8 byte, the most it can cost (a token is at least one byte).
 */
type CountTokens = (text: string) => number;

/** Longest unbroken run (of spaces, or of anything else) handed to the tokenizer in one piece. */
const SLICE = 32;
/** Characters tokenized per estimate; the rest is billed at the ceiling. */
export const EXACT_CHARS = 48 * 1024;

export class TokenEstimate {
  readonly #count: CountTokens;
  #budget = EXACT_CHARS;

  constructor(count: CountTokens) {
    this.#count = count;
  }

  /** Tokens of `text`, counted within what is left of the budget and bounded above beyond it. */
  count(text: string): number {
    if (text.length <= this.#budget) {
      this.#budget -= text.length;
      return this.#sliced(text);
    }
    const head = text.slice(0, this.#budget);
    this.#budget = 0;
    return this.#sliced(head) + Buffer.byteLength(text) - Buffer.byteLength(head);
  }

  #sliced(text: string): number {
    const count = this.#count;
    let tokens = 0;
    let segment = 0;
    let run = 0;
    let space = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      const isSpace = c === 32 || (c >= 9 && c <= 13);
      if (isSpace !== space) {
        space = isSpace;
        run = i;
      } else if (i - run >= SLICE && (c < 0xdc00 || c > 0xdfff)) {
        // Cut before a character, never inside a surrogate pair.
        tokens += count(text.slice(segment, i));
        segment = run = i;
      }
    }
    return tokens + count(segment === 0 ? text : text.slice(segment));
  }
}

/**
 * Each group's texts counted in turn by one estimate (one budget), as a caller holding a `TokenEstimate`
 * would count them: the counting worker's whole job, and its fallback on this thread.
 */
export function estimateGroups(count: CountTokens, groups: readonly (readonly string[])[]): number[][] {
  return groups.map((texts) => {
    const estimate = new TokenEstimate(count);
    return texts.map((text) => estimate.count(text));
  });
}

let countTokens: CountTokens | null = null;

/**
 * The tokenizer loads on the first turn that needs an estimate (~100 ms once), not at start: most
 * upstreams report usage, and it costs ~40 MB. cl100k is half the size of o200k; for an unknown upstream
 * model either is an estimate, and the ledger row says so (`estimated`).
 */
export async function tokenizer(): Promise<CountTokens> {
  if (!countTokens) countTokens = (await import('gpt-tokenizer/encoding/cl100k_base')).countTokens as CountTokens;
  return countTokens;
}

/**
 * Prompt tokens of chat messages as OpenAI counts them (3 per reply, 4 per message, plus the text):
 * `textTokens` are the tokens of `promptTexts(messages)`.
 */
export function promptTokens(messages: readonly { content: unknown }[], textTokens: Iterable<number>): number {
  let prompt = 3 + 4 * messages.length;
  for (const tokens of textTokens) prompt += tokens;
  return prompt;
}

/** The texts of chat messages whose tokens a prompt's count adds up (`promptTokens`), in order. */
export function promptTexts(messages: readonly { content: unknown }[]): string[] {
  const texts: string[] = [];
  for (const message of messages) {
    const content = message.content;
    if (typeof content === 'string') texts.push(content);
    else if (Array.isArray(content)) {
      for (const part of content as { text?: unknown }[]) if (typeof part?.text === 'string') texts.push(part.text);
    }
  }
  return texts;
}

/**
 * Prompt tokens of chat messages without the tokenizer, for a running stream's crash checkpoint (asked every
 * second, so it must cost next to nothing, and must not load the tokenizer on an instance whose upstreams
 * report usage): the message overhead as `promptTokens` counts it, plus a token per four UTF-8 bytes of
 * text — within ~15 % of the count for English prose, below it for code and most other scripts (a CJK
 * character is three bytes and about a token). Only a crashed stream is billed by it, marked `estimated`.
 */
export function quickPromptTokens(messages: readonly { content: unknown }[]): number {
  let bytes = 0;
  for (const text of promptTexts(messages)) bytes += Buffer.byteLength(text);
  return promptTokens(messages, [Math.ceil(bytes / 4)]);
}

/**
 * What an upstream's reply says about usage, checked against the turn's bounds (`saneUsage`), and the
 * non-streaming chat reply re-framed without parsing it (`fastChatReply`) — the counterpart of the stream
 * rewriter's fast path (`stream-rewriter.ts`).
 *
 * svc's fixes to a chat completion are `object`, `model` (the product id), and `logprobs` and
 * `message.refusal` on every choice. When the upstream's text already has all but the model right, the
 * reply is its text with the model swapped, and only the small `usage` object is parsed, for billing. What
 * the text must look like — anything else returns null and the caller parses the whole body:
 * - it starts `{"id":"…","object":"chat.completion","created":N,"model":"…","choices":[` exactly (no
 *   whitespace, no escapes in id and model) and ends with `}`, so a non-JSON or truncated body fails here;
 * - every choice has `"logprobs":null` and a `"refusal":` key (both counted against `"finish_reason":`;
 *   a logprobs object has a `refusal` key of its own, so such replies take the full parse);
 * - the last `"usage":` is an object of numbers, nulls and flat `*_details` objects, with sane counts, and
 *   after it come only scalar top-level members (`service_tier`, `system_fingerprint`, vLLM's
 *   `kv_transfer_params`) and the closing `}`; nothing after the prefix names a `"model":` again.
 *
 * Why counting keys is sound: inside a JSON string every `"` is escaped, so `"usage":` with a bare quote is
 * always a key — no text in a prompt or written by the model can pass for one. Why forwarding the rest
 * unparsed is acceptable: the upstream is operator-configured, and the streaming fast path already forwards
 * its chunk bodies unparsed.
 */
import type { UpstreamUsage } from './stream-rewriter.ts';

/** What a turn may bill at most: prompt tokens (request bytes) and output tokens (n × max_tokens). */
export interface UsageBounds {
  promptBound: number;
  outputBound: number;
}

/** Upstream usage if it is plausible; null (→ estimate) when absent, negative, or beyond what was asked for. */
export function saneUsage(value: unknown, bounds: UsageBounds): UpstreamUsage | null {
  if (!value || typeof value !== 'object') return null;
  const { prompt_tokens: prompt, completion_tokens: completion } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(prompt) || !Number.isSafeInteger(completion)) return null;
  const p = prompt as number;
  const c = completion as number;
  if (p < 0 || c < 0 || p > bounds.promptBound || c > bounds.outputBound) return null;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/** Up to the model's value: kept as sent; then the model, replaced. */
const head = /(\{"id":"[^"\\]*","object":"chat\.completion","created":\d+,"model":)"[^"\\]*"(?=,"choices":\[)/y;
/** An object of keys and non-string values, with at most one level of nested objects (`*_details`). */
const usageObject = /\{(?:[^{}"]|"[a-z_]+"|\{(?:[^{}"]|"[a-z_]+")*\})*\}/y;
/** Scalar members (strings without escapes), then the end of the top-level object and of the text. */
const tail = /(?:,"[a-z_]+":(?:null|true|false|-?[\d.eE+-]+|"[^"\\]*"))*\}\s*$/y;

/**
 * The upstream's reply as svc sends it, with `model` named `model`, and its sane usage; null when the
 * text is not in the usual shape, is not quite right yet, or has no usable usage.
 */
export function fastChatReply(text: string, model: string, bounds: UsageBounds): { body: string; usage: UpstreamUsage } | null {
  head.lastIndex = 0;
  const match = head.exec(text);
  if (!match) return null;
  const rest = head.lastIndex;
  const choices = count(text, '"finish_reason":', rest);
  if (count(text, '"logprobs":', rest) !== choices || count(text, '"logprobs":null', rest) !== choices || count(text, '"refusal":', rest) !== choices) return null;
  if (text.includes('"model":', rest)) return null;
  const usageAt = text.lastIndexOf('"usage":');
  if (usageAt < rest) return null;
  usageObject.lastIndex = usageAt + 8;
  const found = usageObject.exec(text);
  if (!found) return null;
  tail.lastIndex = usageObject.lastIndex;
  if (!tail.test(text)) return null;
  let reported: { total_tokens?: unknown };
  try {
    reported = JSON.parse(found[0]) as typeof reported;
  } catch {
    return null;
  }
  const usage = saneUsage(reported, bounds);
  // The client sees the upstream's usage: only when its total is the one svc would have written.
  if (!usage || reported.total_tokens !== usage.total_tokens) return null;
  return { body: `${match[1]}${JSON.stringify(model)}${text.slice(rest)}`, usage };
}

function count(text: string, key: string, from: number): number {
  let n = 0;
  for (let at = text.indexOf(key, from); at !== -1; at = text.indexOf(key, at + key.length)) n++;
  return n;
}

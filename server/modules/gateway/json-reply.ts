/**
 * What an upstream's reply says about usage, checked against the turn's bounds (`saneUsage`), and the
 * non-streaming chat reply re-framed without parsing it (`fastChatReply`) — the counterpart of the stream
 * rewriter's fast path (`stream-rewriter.ts`). `plainReply` reads a one-choice text reply the same way, for
 * the APIs that frame it anew (the Responses API: `ResponsesFraming.fastJson`).
 *
 * svc's fixes to a chat completion are `object`, `model` (the product id), and `logprobs` and
 * `message.refusal` on every choice. When the upstream's text already has all but the model right, the
 * reply is its text with the model swapped, and only the small `usage` object is read, for billing. What
 * the text must look like — anything else returns null and the caller parses the whole body:
 * - it starts `{"id":"…","object":"chat.completion","created":N,"model":"…","choices":[` exactly (no
 *   whitespace, no escapes in id and model) and ends with `}`, so a non-JSON or truncated body fails here;
 * - every choice has `"logprobs":null` and a `"refusal":` key (both counted against `"finish_reason":`;
 *   a logprobs object has a `refusal` key of its own, so such replies take the full parse);
 * - the last `"usage":` opens with its three token counts (sane, and a consistent total), then has only
 *   numbers, nulls and flat `*_details` objects; after it come only scalar top-level members
 *   (`service_tier`, `system_fingerprint`, vLLM's `kv_transfer_params`) and the closing `}`;
 * - nothing after the prefix names a `"model":` again.
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
const count = String.raw`"([a-z]+)_tokens":(0|[1-9]\d*)`;
const member = String.raw`"[a-z_]+":(?:0|[1-9]\d*|null)`;
/**
 * From the usage object's `{` to the end: its three counts first (in any order: vLLM writes prompt, total,
 * completion), more numbers, nulls and flat `*_details` objects; then scalar top-level members and `}`.
 */
const usageToEnd = new RegExp(
  String.raw`\{${count},${count},${count}(?:,${member}|,"[a-z_]+_details":\{(?:${member}(?:,${member})*)?\})*\}(?:,"[a-z_]+":(?:null|true|false|-?[\d.eE+-]+|"[^"\\]*"))*\}\s*$`,
  'y',
);

/**
 * The upstream's reply as svc sends it, with `model` named `model`, and its sane usage; null when the
 * text is not in the usual shape, is not quite right yet, or has no usable usage.
 */
export function fastChatReply(text: string, model: string, bounds: UsageBounds): { body: string; usage: UpstreamUsage } | null {
  head.lastIndex = 0;
  const match = head.exec(text);
  if (!match) return null;
  const rest = head.lastIndex;
  const choices = keys(text, 'finish_reason":', rest);
  if (keys(text, 'logprobs":', rest) !== choices || keys(text, 'logprobs":null', rest) !== choices || keys(text, 'refusal":', rest) !== choices) return null;
  if (keys(text, 'model":', rest) !== 0) return null;
  const usageAt = text.lastIndexOf('usage":');
  if (usageAt <= rest || text.charCodeAt(usageAt - 1) !== 34 /* " */) return null;
  usageToEnd.lastIndex = usageAt + 7;
  const found = usageToEnd.exec(text);
  if (!found) return null;
  const reported: Record<string, number> = { [found[1]!]: Number(found[2]), [found[3]!]: Number(found[4]), [found[5]!]: Number(found[6]) };
  const usage = saneUsage({ prompt_tokens: reported.prompt, completion_tokens: reported.completion }, bounds);
  // The client sees the upstream's usage: only when its total is the one svc would have written.
  if (!usage || reported.total !== usage.total_tokens) return null;
  return { body: `${match[1]}${JSON.stringify(model)}${text.slice(rest)}`, usage };
}

/**
 * How often `"` + `tail` occurs after `from` (tail `logprobs":` counts `"logprobs":` keys, not
 * `"top_logprobs":`). Searching without the leading quote, then checking it, is several times faster:
 * JSON is full of quotes.
 */
function keys(text: string, tail: string, from: number): number {
  let n = 0;
  for (let at = text.indexOf(tail, from); at !== -1; at = text.indexOf(tail, at + tail.length)) if (text.charCodeAt(at - 1) === 34 /* " */) n++;
  return n;
}

/** A reply's one text choice, read without parsing the whole body (`plainReply`). */
export interface PlainReply {
  /** The content as the upstream escaped it, without its quotes: a valid JSON string body ('' when null). */
  content: string;
  /** `finish_reason`, a plain word (`stop` when null, as the parsed path reads it). */
  finishReason: string;
  usage: UpstreamUsage;
}

/**
 * A JSON string, escapes checked, so its text can be copied into other JSON as it is. Its unescaped
 * characters are any from space up but `"` and `\\` (no control characters).
 */
const jsonString = /"[ !#-[\]-\uffff]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[ !#-[\]-\uffff]*)*"/y;
/** A member's key; only plain lower-case keys are read, anything else takes the parsed path. */
const memberKey = /"[a-z_]+":/y;
/** A value that holds nothing the reply is made of: a number, a literal, an empty array or object. */
const emptyValue = /null|true|false|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|\[\]|\{\}/y;
const finishWord = /"[a-z_]+"/y;

/**
 * The one choice of a reply in the usual shape (`fastChatReply`'s head, one choice, `"usage"` right after the
 * choices), read without `JSON.parse`: its content still escaped, its finish reason and sane usage. Null —
 * parse the body — for anything a framing would read more of: a refusal, tool calls, a logprobs object,
 * several choices, a member that is not a plain value, usage that is absent or not sane. Keys are matched in
 * place (`startsWith`), not cut out: this runs once a reply, in place of the parse.
 */
export function plainReply(text: string, bounds: UsageBounds): PlainReply | null {
  head.lastIndex = 0;
  if (!head.test(text)) return null;
  const reply = { content: '', finishReason: 'stop' };
  const at = choice(text, head.lastIndex + ',"choices":['.length, reply);
  if (at === -1 || !text.startsWith('],"usage":', at)) return null;
  usageToEnd.lastIndex = at + '],"usage":'.length;
  const found = usageToEnd.exec(text);
  if (!found) return null;
  const reported: Record<string, number> = { [found[1]!]: Number(found[2]), [found[3]!]: Number(found[4]), [found[5]!]: Number(found[6]) };
  const usage = saneUsage({ prompt_tokens: reported.prompt, completion_tokens: reported.completion }, bounds);
  return usage && { ...reply, usage };
}

/** Reads the choice object at `at` into `reply`; where it ends, or -1 when it is not a plain text choice. */
function choice(text: string, at: number, reply: { content: string; finishReason: string }): number {
  if (text.charCodeAt(at) !== 123 /* { */) return -1;
  let message = false;
  for (let key = at + 1; ; ) {
    const from = valueAt(text, key);
    if (from === -1) return -1;
    let end: number;
    if (text.startsWith('"message"', key)) {
      message = true;
      end = messageObject(text, from, reply);
    } else if (text.startsWith('"finish_reason"', key)) {
      end = text.startsWith('null', from) ? from + 4 : -1;
      finishWord.lastIndex = from;
      if (end === -1 && finishWord.test(text)) {
        end = finishWord.lastIndex;
        reply.finishReason = text.slice(from + 1, end - 1);
      }
    } else if (text.startsWith('"logprobs"', key)) {
      // A logprobs object is the one member a framing could read: only null goes this way.
      end = text.startsWith('null', from) ? from + 4 : -1;
    } else end = plainValue(text, from);
    const next = after(text, end);
    if (next === 0) return message ? end + 1 : -1;
    if (next === -1) return -1;
    key = next;
  }
}

/** Reads the message object at `at` into `reply`; where it ends, or -1 when it is not a plain assistant text. */
function messageObject(text: string, at: number, reply: { content: string }): number {
  if (text.charCodeAt(at) !== 123 /* { */) return -1;
  if (text.charCodeAt(at + 1) === 125 /* } */) return at + 2;
  for (let key = at + 1; ; ) {
    const from = valueAt(text, key);
    if (from === -1) return -1;
    let end: number;
    if (text.startsWith('"role"', key)) end = text.startsWith('"assistant"', from) ? from + '"assistant"'.length : -1;
    else if (text.startsWith('"content"', key)) {
      end = text.startsWith('null', from) ? from + 4 : -1;
      jsonString.lastIndex = from;
      if (end === -1 && jsonString.test(text)) {
        end = jsonString.lastIndex;
        reply.content = text.slice(from + 1, end - 1);
      }
    } else if (text.startsWith('"refusal"', key) || text.startsWith('"function_call"', key) || text.startsWith('"audio"', key)) {
      end = text.startsWith('null', from) ? from + 4 : -1;
    } else if (text.startsWith('"tool_calls"', key)) {
      end = text.startsWith('[]', from) ? from + 2 : text.startsWith('null', from) ? from + 4 : -1;
    } else end = plainValue(text, from);
    const next = after(text, end);
    if (next === 0) return end + 1;
    if (next === -1) return -1;
    key = next;
  }
}

/** Where the value of the member whose key is at `at` starts, or -1 when no plain key is there. */
function valueAt(text: string, at: number): number {
  memberKey.lastIndex = at;
  return memberKey.test(text) ? memberKey.lastIndex : -1;
}

/** After a value ending at `end`: the next member's key (`,`), 0 at the object's `}`, -1 otherwise. */
function after(text: string, end: number): number {
  if (end === -1) return -1;
  const code = text.charCodeAt(end);
  return code === 125 /* } */ ? 0 : code === 44 /* , */ ? end + 1 : -1;
}

/** A string or an empty value; where it ends, or -1. */
function plainValue(text: string, at: number): number {
  const pattern = text.charCodeAt(at) === 34 /* " */ ? jsonString : emptyValue;
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex : -1;
}

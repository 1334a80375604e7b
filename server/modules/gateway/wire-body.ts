/**
 * The upstream body made from the client's own bytes (issue 16, "a cheaper proxy"). Serialising the
 * validated body again was ~5 % of svc's instructions per request (`test/bench/instr.ts`): escaping every
 * string of a 1.2 KB prompt, then converting the result to UTF-8 for the socket. What svc changes in a chat
 * request is nearly always at the top level and small — the model becomes the deployment's, the recommended
 * values are filled in — so the client's bytes are sent with the model's value replaced and the added fields
 * written before the closing brace.
 *
 * `sent` is a shallow copy of the parsed body taken before validation. Validation and the executor replace a
 * top-level field when they change it, never edit inside one (`chat.validate.ts`), so comparing the fields
 * by identity tells what changed. Anything other than additions and the model — a field removed or replaced,
 * a model spelled with escapes, a second `"model"` key anywhere in the text, a byte-order mark — returns
 * null, and the body is serialised as before.
 */

import { CLOSE, COLON, COMMA, isJsonSpace, OPEN } from './json-bytes.ts';

const MODEL_KEY = Buffer.from('"model"');

export interface ClientBody {
  /** The request's bytes as the client sent them. */
  raw: Buffer;
  /** The parsed body's top-level fields before validation. */
  sent: Record<string, unknown>;
}

/** The upstream body for `body` (validated, `model` already the deployment's), or null when it must be serialised. */
export function spliceUpstreamBody(client: ClientBody, body: Record<string, unknown>): Buffer | null {
  const { raw, sent } = client;
  if (typeof sent.model !== 'string' || typeof body.model !== 'string') return null;
  for (const field in sent) if (field !== 'model' && body[field] !== sent[field]) return null;
  let added = '';
  for (const field in body) {
    const value = body[field];
    if (value !== undefined && !Object.hasOwn(sent, field)) added += `,${JSON.stringify(field)}:${JSON.stringify(value)}`;
  }
  // A byte-order mark (which the parser skips) or anything else before the object: serialised instead.
  if (!opensObject(raw)) return null;
  const close = lastBrace(raw);
  const written = JSON.stringify(sent.model);
  const start = modelValue(raw, written);
  const end = start + written.length;
  if (close === -1 || start === -1 || end > close) return null;
  const model = body.model === sent.model ? null : JSON.stringify(body.model);
  const modelBytes = model === null ? end - start : Buffer.byteLength(model);
  const out = Buffer.allocUnsafe(close + 1 - (end - start) + modelBytes + Buffer.byteLength(added));
  let at = raw.copy(out, 0, 0, start);
  at += model === null ? raw.copy(out, at, start, end) : out.write(model, at, 'utf8');
  at += raw.copy(out, at, end, close);
  at += out.write(added, at, 'utf8');
  out[at] = CLOSE;
  return out;
}

/** Whether the text starts with the object's `{` (leading whitespace allowed). */
function opensObject(raw: Buffer): boolean {
  let at = 0;
  while (at < raw.length && isJsonSpace(raw[at]!)) at++;
  return raw[at] === OPEN;
}

/** Where the closing brace of the top-level object is (trailing whitespace allowed), or -1. */
function lastBrace(raw: Buffer): number {
  let at = raw.length - 1;
  while (at >= 0 && isJsonSpace(raw[at]!)) at--;
  return at >= 0 && raw[at] === CLOSE ? at : -1;
}

/**
 * Where the `"model"` key's string value starts, when the text has exactly one `"model"` key and its value is
 * `written` (the model as `JSON.stringify` writes it, ASCII only); else -1. In valid JSON a quote inside a
 * string is escaped, so a `"model"` preceded by `{` or `,` (and whitespace) is a key: nested objects' keys
 * count too, and two keys (one nested, or a duplicate) make the top-level one ambiguous without a full parse.
 */
function modelValue(raw: Buffer, written: string): number {
  let found = -1;
  for (let at = raw.indexOf(MODEL_KEY); at !== -1; at = raw.indexOf(MODEL_KEY, at + MODEL_KEY.length)) {
    let before = at - 1;
    while (before >= 0 && isJsonSpace(raw[before]!)) before--;
    if (before < 0 || (raw[before] !== OPEN && raw[before] !== COMMA)) continue;
    if (found !== -1) return -1;
    let start = at + MODEL_KEY.length;
    while (start < raw.length && isJsonSpace(raw[start]!)) start++;
    if (raw[start] !== COLON) return -1;
    start++;
    while (start < raw.length && isJsonSpace(raw[start]!)) start++;
    if (!sameAscii(raw, start, written)) return -1;
    found = start;
  }
  return found;
}

/** Whether `raw` holds `text` at `at`, byte for byte, and `text` is ASCII (a byte per character). */
function sameAscii(raw: Buffer, at: number, text: string): boolean {
  if (at + text.length > raw.length) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7e || raw[at + i] !== code) return false;
  }
  return true;
}

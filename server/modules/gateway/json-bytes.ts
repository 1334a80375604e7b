/**
 * The bytes of JSON's structure, for the code that reads JSON text as bytes without parsing it: the stream
 * rewriter's fast path (`stream-rewriter.ts`) and the upstream body spliced from the client's bytes
 * (`wire-body.ts`). In UTF-8 these never occur inside a multi-byte character.
 */
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const SPACE = 0x20;
export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const BACKSLASH = 0x5c;
export const OPEN = 0x7b; // {
export const CLOSE = 0x7d; // }

/** JSON's insignificant whitespace: space, tab, line feed, carriage return. */
export function isJsonSpace(byte: number): boolean {
  return byte === SPACE || byte === LF || byte === CR || byte === TAB;
}

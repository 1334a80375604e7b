import { randomBytes } from 'node:crypto';

const ID_CHARS = 26;
/**
 * CSPRNG bytes drawn and encoded 256 ids at a time: one call to the generator and one to the base64url
 * encoder per 256 requests, and a slice of that text per request. Every 26 characters of base64url are 156
 * random bits wherever they start. Encoding 20 bytes per request instead took ~16 µs at a stream's start
 * under load (a native call whose code had left the CPU's caches; test/bench/RESULTS.md, fourteenth pass).
 */
const POOL_IDS = 256;
/** 6 bits a character, 8 a byte: 4,992 bytes are exactly 256 ids' characters. */
const POOL_BYTES = (POOL_IDS * ID_CHARS * 6) / 8;
let pool = '';
let offset = 0;

/** `mbr_` + 26 URL-safe characters (156 bits from the CSPRNG). */
export function newRequestId(): string {
  if (offset + ID_CHARS > pool.length) {
    pool = randomBytes(POOL_BYTES).toString('base64url');
    offset = 0;
  }
  const id = pool.slice(offset, offset + ID_CHARS);
  offset += ID_CHARS;
  return `mbr_${id}`;
}

const CLIENT_REQUEST_ID = /^mbr_[A-Za-z0-9_-]{8,64}$/;

/** Keeps a well-formed client `x-svc-request-id` for end-to-end tracing; anything else gets a fresh id. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : newRequestId();
}

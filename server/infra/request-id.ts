import { randomBytes } from 'node:crypto';

const ID_CHARS = 26;
/** 4,992 bytes: a multiple of 3 (whole base64url characters) that is 256 request ids' characters. */
const POOL_BYTES = 4992;

/**
 * CSPRNG bytes drawn and encoded ~5 KB at a time: one call to the generator and one to the encoder per
 * few hundred ids, and a slice of that text per id. Every character of the text is random wherever a slice
 * starts (6 bits in base64url, 4 in hex). Drawing 20 bytes per request instead took ~16 µs at a stream's
 * start under load (a native call whose code had left the CPU's caches).
 */
class RandomText {
  readonly #encoding: 'base64url' | 'hex';
  #pool = '';
  #offset = 0;

  constructor(encoding: 'base64url' | 'hex') {
    this.#encoding = encoding;
  }

  /** `chars` random characters (at most the pool's). */
  take(chars: number): string {
    if (this.#offset + chars > this.#pool.length) {
      this.#pool = randomBytes(POOL_BYTES).toString(this.#encoding);
      this.#offset = 0;
    }
    const text = this.#pool.slice(this.#offset, this.#offset + chars);
    this.#offset += chars;
    return text;
  }
}

const base64url = new RandomText('base64url');
const hex = new RandomText('hex');

/** `mbr_` + 26 URL-safe characters (156 bits from the CSPRNG). */
export function newRequestId(): string {
  return `mbr_${base64url.take(ID_CHARS)}`;
}

/** `chars` random URL-safe characters (6 bits each), for ids the APIs give out (`msg_…`, `toolu_…`). */
export function randomBase64url(chars: number): string {
  return base64url.take(chars);
}

/** `chars` random hexadecimal digits (4 bits each), for ids the APIs give out (`resp_…`). */
export function randomHex(chars: number): string {
  return hex.take(chars);
}

const CLIENT_REQUEST_ID = /^mbr_[A-Za-z0-9_-]{8,64}$/;

/** Keeps a well-formed client `x-svc-request-id` for end-to-end tracing; anything else gets a fresh id. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : newRequestId();
}

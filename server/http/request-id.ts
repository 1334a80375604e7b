import { randomBytes } from 'node:crypto';

const ID_BYTES = 20;
// CSPRNG bytes drawn 256 ids at a time: one call to the generator per 256 requests, not one per request.
let pool = Buffer.alloc(0);
let offset = 0;

/** `mbr_` + 26 URL-safe characters (156 bits from the CSPRNG). */
export function newRequestId(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * 256);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES).slice(0, 26);
  offset += ID_BYTES;
  return `mbr_${id}`;
}

const CLIENT_REQUEST_ID = /^mbr_[A-Za-z0-9_-]{8,64}$/;

/** Keeps a well-formed client `x-svc-request-id` for end-to-end tracing; anything else gets a fresh id. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : newRequestId();
}

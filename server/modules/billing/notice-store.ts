/**
 * How notices are kept. A verified notice is a money record: its raw bytes, exactly as received, stay for
 * good. A notice that was not verified (a forgery, a misconfigured key, one that could not be processed)
 * keeps only what an audit needs — the SHA-256 of the whole body, its size, the signature headers and the
 * first KiB — is stored at most `payments.unverifiedPerMinute` times a minute per provider (the rest are
 * answered the same way but not written), and is purged after `payments.unverifiedRetentionDays`.
 *
 * Bodies are bytea, so any byte — a NUL, invalid UTF-8 — is kept as it came; text and JSON columns get NUL
 * replaced by U+FFFD, which PostgreSQL's text and jsonb cannot hold.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Database, Em } from '../../db/orm.ts';
import { BillingNotice, type NoticeOutcome } from './billing.entity.ts';
import type { PaymentProviderId, RawNotification } from './providers/provider.ts';

/** What was received: the signature-relevant headers and the raw body. */
export interface Evidence {
  headers: Record<string, string> | null;
  body: Buffer | null;
}

export interface NoticeRow {
  provider: PaymentProviderId;
  source: 'notify' | 'query';
  verified: boolean;
  outcome: NoticeOutcome;
  reason: string | null;
  detail: string | null;
  evidence: Evidence;
  orderId?: string | null;
  eventId?: string | null;
  providerTradeNo?: string | null;
  status?: string | null;
  amountMinor?: number | null;
  currency?: string | null;
  payload?: unknown;
}

/** Decides whether one more unverified notice of a provider may be stored now. */
export type UnverifiedBudget = (provider: PaymentProviderId) => Promise<boolean>;

export interface NoticeStoreOptions {
  now: () => number;
  budget: UnverifiedBudget;
  retentionDays: number;
}

/** Bytes of an unverified notice's body that are kept. */
export const unverifiedBodyBytes = 1024;

/** Request headers worth keeping as evidence: what the signatures cover, never cookies or credentials. */
const evidenceHeaders = [
  'content-type',
  'content-length',
  'user-agent',
  'wechatpay-timestamp',
  'wechatpay-nonce',
  'wechatpay-signature',
  'wechatpay-serial',
  'stripe-signature',
  'x-svc-sandbox-signature',
];

export class NoticeStore {
  readonly #db: Database;
  readonly #options: NoticeStoreOptions;

  constructor(db: Database, options: NoticeStoreOptions) {
    this.#db = db;
    this.#options = options;
  }

  /** Writes one notice through `em` (inside the caller's transaction when it is one). */
  async store(em: Em, row: NoticeRow): Promise<void> {
    const body = row.evidence.body;
    const kept = body && !row.verified ? body.subarray(0, unverifiedBodyBytes) : body;
    em.create(BillingNotice, {
      id: randomUUID(),
      createdAt: new Date(this.#options.now()),
      provider: row.provider,
      source: row.source,
      verified: row.verified,
      outcome: row.outcome,
      reason: text(row.reason, 64),
      detail: text(row.detail, 2000),
      orderId: text(row.orderId, 128),
      eventId: text(row.eventId, 255),
      providerTradeNo: text(row.providerTradeNo, 255),
      status: text(row.status, 16),
      amountMinor: row.amountMinor ?? null,
      currency: row.currency ?? null,
      headers: row.evidence.headers ? (withoutNul(row.evidence.headers) as Record<string, string>) : null,
      body: kept ? Buffer.from(kept) : null,
      bodySha256: body ? createHash('sha256').update(body).digest('hex') : null,
      bodyBytes: body ? body.length : null,
      payload: plainJson(row.payload),
    });
    await em.flush();
  }

  /**
   * Stores a notice that was not verified, within the provider's budget; returns whether it was written.
   * Never throws: the notice is answered with the provider's failure reply either way.
   */
  async storeUnverified(row: NoticeRow & { verified: false }): Promise<boolean> {
    try {
      if (!(await this.#options.budget(row.provider))) return false;
      await this.store(this.#db.orm.em.fork(), row);
      return true;
    } catch {
      return false;
    }
  }

  /** Deletes notices that were not verified and are older than the retention; returns how many. */
  async purgeUnverified(now: Date = new Date(this.#options.now())): Promise<number> {
    const before = new Date(now.getTime() - this.#options.retentionDays * 86_400_000);
    return this.#db.orm.em.fork().nativeDelete(BillingNotice, { verified: false, createdAt: { $lt: before } });
  }
}

/** The evidence of a notify request: the listed headers and the body's raw bytes. */
export function notifyEvidence(request: RawNotification): Evidence {
  const headers: Record<string, string> = {};
  for (const name of evidenceHeaders) {
    const value = request.headers[name];
    if (value !== undefined) headers[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, 2048);
  }
  return { headers, body: request.body };
}

function text(value: string | null | undefined, max: number): string | null {
  return value === null || value === undefined ? null : value.replaceAll('\0', '\uFFFD').slice(0, max);
}

/** `value` as the JSON it serialises to, with NUL in its strings replaced; null when it has none. */
function plainJson(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  const json = JSON.stringify(value);
  return json === undefined ? null : withoutNul(JSON.parse(json));
}

/** A JSON value with NUL in its strings (and keys) replaced: jsonb refuses `\u0000`. */
function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\0', '\uFFFD');
  if (Array.isArray(value)) return value.map(withoutNul);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key.replaceAll('\0', '\uFFFD'), withoutNul(inner)]));
  }
  return value;
}

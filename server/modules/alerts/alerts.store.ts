/**
 * Spend alerts in PostgreSQL: thresholds and channels per account, the claims that make each alert happen
 * once, the in-app notices, and the delivery queue. Plain SQL (no unit of work): the monitor and the
 * delivery loop run outside requests, on every instance.
 */
import { randomUUID } from 'node:crypto';
import type { Micros } from '../../config/money.ts';
import type { Database, Em } from '../../db/orm.ts';

export interface AlertChannels {
  emailEnabled: boolean;
  webhookUrl: string | null;
  webhookSecret: string | null;
  updatedAt: Date | null;
}

export interface Recipient {
  id: string;
  email: string;
  locale: string | null;
}

export interface NoticeRow {
  id: string;
  accountId: string;
  meter: string;
  threshold: number;
  windowKey: string;
  usedMicros: Micros;
  limitMicros: Micros;
  currency: string;
  resetsAt: Date;
  createdAt: Date;
  readAt: Date | null;
}

export interface DeliveryAttempt {
  at: string;
  attempt: number;
  status: number | null;
  latencyMs: number;
  response: string | null;
  error: string | null;
}

export interface DeliveryRow {
  id: string;
  accountId: string;
  channel: 'email' | 'webhook';
  target: string;
  payload: unknown;
  test: boolean;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  createdAt: Date;
  finishedAt: Date | null;
  lastStatus: number | null;
  lastLatencyMs: number | null;
  lastResponse: string | null;
  lastError: string | null;
  history: DeliveryAttempt[];
}

/** A delivery to queue in the claim's transaction. */
export interface NewDelivery {
  channel: 'email' | 'webhook';
  target: string;
  payload: unknown;
  test?: boolean;
}

/** One threshold crossed, as the monitor claims it. */
export interface Claim {
  accountId: string;
  meter: string;
  threshold: number;
  windowKey: string;
  usedMicros: Micros;
  limitMicros: Micros;
  currency: string;
  resetsAt: Date;
}

type Row = Record<string, unknown>;

function deliveryOf(row: Row): DeliveryRow {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    channel: row.channel as DeliveryRow['channel'],
    target: row.target as string,
    payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
    test: Boolean(row.test),
    state: row.state as DeliveryRow['state'],
    attempts: Number(row.attempts),
    nextAttemptAt: new Date(row.next_attempt_at as string),
    createdAt: new Date(row.created_at as string),
    finishedAt: row.finished_at ? new Date(row.finished_at as string) : null,
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastLatencyMs: row.last_latency_ms === null ? null : Number(row.last_latency_ms),
    lastResponse: (row.last_response as string | null) ?? null,
    lastError: (row.last_error as string | null) ?? null,
    history: (typeof row.history === 'string' ? JSON.parse(row.history) : row.history) as DeliveryAttempt[],
  };
}

function noticeOf(row: Row): NoticeRow {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    meter: row.meter as string,
    threshold: Number(row.threshold),
    windowKey: row.window_key as string,
    usedMicros: Number(row.used_micros),
    limitMicros: Number(row.limit_micros),
    currency: row.currency as string,
    resetsAt: new Date(row.resets_at as string),
    createdAt: new Date(row.created_at as string),
    readAt: row.read_at ? new Date(row.read_at as string) : null,
  };
}

export class AlertStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  #all<T = Row>(sql: string, params: unknown[] = [], tx?: Em): Promise<T[]> {
    const em = tx ?? this.#db.orm.em;
    return em.getConnection().execute<T[]>(sql, params, 'all', tx?.getTransactionContext());
  }

  /** The thresholds an account chose, by meter (meters it never set are absent: they use the defaults). */
  async thresholds(accountId: string): Promise<Map<string, number[]>> {
    const rows = await this.#all<{ meter: string; thresholds: number[] | string }>(`select "meter", "thresholds" from "alert_threshold" where "account_id" = ?`, [accountId]);
    return new Map(rows.map((row) => [row.meter, parseIntArray(row.thresholds)]));
  }

  async setThresholds(accountId: string, meter: string, thresholds: readonly number[]): Promise<void> {
    await this.#all(
      `insert into "alert_threshold" ("account_id", "meter", "thresholds", "updated_at") values (?, ?, ?::smallint[], now())
       on conflict ("account_id", "meter") do update set "thresholds" = excluded."thresholds", "updated_at" = now()`,
      [accountId, meter, `{${thresholds.join(',')}}`],
    );
  }

  async channels(accountId: string): Promise<AlertChannels> {
    const [row] = await this.#all<Row>(`select "email_enabled", "webhook_url", "webhook_secret", "updated_at" from "alert_channel" where "account_id" = ?`, [accountId]);
    if (!row) return { emailEnabled: true, webhookUrl: null, webhookSecret: null, updatedAt: null };
    return {
      emailEnabled: Boolean(row.email_enabled),
      webhookUrl: (row.webhook_url as string | null) ?? null,
      webhookSecret: (row.webhook_secret as string | null) ?? null,
      updatedAt: new Date(row.updated_at as string),
    };
  }

  async setChannels(accountId: string, channels: Omit<AlertChannels, 'updatedAt'>): Promise<void> {
    await this.#all(
      `insert into "alert_channel" ("account_id", "email_enabled", "webhook_url", "webhook_secret", "updated_at") values (?, ?, ?, ?, now())
       on conflict ("account_id") do update set "email_enabled" = excluded."email_enabled", "webhook_url" = excluded."webhook_url",
         "webhook_secret" = excluded."webhook_secret", "updated_at" = now()`,
      [accountId, channels.emailEnabled, channels.webhookUrl, channels.webhookSecret],
    );
  }

  /** Who is told about a payer's alerts: the person, or an organisation's owner and admins. */
  async recipients(payerId: string, tx?: Em): Promise<{ kind: 'person' | 'organisation'; name: string | null; recipients: Recipient[] }> {
    const [payer] = await this.#all<{ kind: 'person' | 'organisation'; email: string; locale: string | null; name: string | null }>(
      `select a."kind", a."email", a."locale", o."name" from "account" a left join "organisation" o on o."id" = a."id" where a."id" = ?`,
      [payerId],
      tx,
    );
    if (!payer) return { kind: 'person', name: null, recipients: [] };
    if (payer.kind === 'person') return { kind: 'person', name: null, recipients: [{ id: payerId, email: payer.email, locale: payer.locale }] };
    const members = await this.#all<Recipient>(
      `select a."id", a."email", a."locale" from "organisation_member" m join "account" a on a."id" = m."account_id"
       where m."organisation_id" = ? and m."role" in ('owner', 'admin') and a."disabled_at" is null order by m."created_at"`,
      [payerId],
      tx,
    );
    return { kind: 'organisation', name: payer.name, recipients: members };
  }

  /**
   * Claims a crossing and, only if this call made the claim, writes its notices and queues its deliveries
   * — one transaction, so an alert is either fully queued or not claimed. The claim's primary key
   * (account, meter, threshold, window) is what lets exactly one instance through.
   */
  async claim(claim: Claim, build: (tx: Em) => Promise<{ notices: string[]; deliveries: NewDelivery[] }>): Promise<{ won: boolean; recipients: string[]; deliveries: number }> {
    return this.#db.orm.em.fork().transactional(async (tx) => {
      const claimed = await this.#all(
        `insert into "alert_claim" ("account_id", "meter", "threshold", "window_key", "used_micros", "limit_micros") values (?, ?, ?, ?, ?, ?)
         on conflict do nothing returning "account_id"`,
        [claim.accountId, claim.meter, claim.threshold, claim.windowKey, claim.usedMicros, claim.limitMicros],
        tx,
      );
      if (claimed.length === 0) return { won: false, recipients: [], deliveries: 0 };
      const { notices, deliveries } = await build(tx);
      for (const recipientId of notices) {
        await this.#all(
          `insert into "alert_notice" ("id", "recipient_id", "account_id", "meter", "threshold", "window_key", "used_micros", "limit_micros", "currency", "resets_at")
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [randomUUID(), recipientId, claim.accountId, claim.meter, claim.threshold, claim.windowKey, claim.usedMicros, claim.limitMicros, claim.currency, claim.resetsAt],
          tx,
        );
      }
      for (const delivery of deliveries) await this.enqueue(claim.accountId, delivery, tx);
      return { won: true, recipients: notices, deliveries: deliveries.length };
    });
  }

  async enqueue(accountId: string, delivery: NewDelivery, tx?: Em): Promise<string> {
    const id = randomUUID();
    await this.#all(
      `insert into "alert_delivery" ("id", "account_id", "channel", "target", "payload", "test") values (?, ?, ?, ?, ?::jsonb, ?)`,
      [id, accountId, delivery.channel, delivery.target, JSON.stringify(delivery.payload), delivery.test ?? false],
      tx,
    );
    return id;
  }

  async notices(recipientId: string, limit: number): Promise<NoticeRow[]> {
    const rows = await this.#all(`select * from "alert_notice" where "recipient_id" = ? order by "created_at" desc, "id" limit ?`, [recipientId, limit]);
    return rows.map(noticeOf);
  }

  async unread(recipientId: string): Promise<number> {
    const [row] = await this.#all<{ count: string | number }>(`select count(*) as "count" from "alert_notice" where "recipient_id" = ? and "read_at" is null`, [recipientId]);
    return Number(row?.count ?? 0);
  }

  async markRead(recipientId: string): Promise<number> {
    const rows = await this.#all(`update "alert_notice" set "read_at" = now() where "recipient_id" = ? and "read_at" is null returning "id"`, [recipientId]);
    return rows.length;
  }

  async deliveries(accountId: string, limit: number): Promise<DeliveryRow[]> {
    const rows = await this.#all(`select * from "alert_delivery" where "account_id" = ? order by "created_at" desc, "id" limit ?`, [accountId, limit]);
    return rows.map(deliveryOf);
  }

  async delivery(id: string): Promise<DeliveryRow | null> {
    const [row] = await this.#all(`select * from "alert_delivery" where "id" = ?`, [id]);
    return row ? deliveryOf(row) : null;
  }

  /**
   * Takes up to `limit` due deliveries for this instance: each is locked for `leaseMs` (another instance
   * skips it; if this one dies it is taken again once the lease ends) and its attempt counted.
   */
  async takeDue(limit: number, leaseMs: number): Promise<DeliveryRow[]> {
    const rows = await this.#all(
      `update "alert_delivery" set "locked_until" = now() + ? * interval '1 millisecond', "attempts" = "attempts" + 1
       where "id" in (select "id" from "alert_delivery" where "state" = 'pending' and "next_attempt_at" <= now()
                      and ("locked_until" is null or "locked_until" <= now())
                      order by "next_attempt_at" limit ? for update skip locked)
       returning *`,
      [leaseMs, limit],
    );
    return rows.map(deliveryOf);
  }

  /**
   * Records an attempt's answer. Delivered; or pending again after `retryInMs`; or failed for good when
   * `retryInMs` is null or the retry would fall past `giveUpAfterMs` from when the delivery was queued.
   */
  async finishAttempt(id: string, attempt: DeliveryAttempt, outcome: { delivered: boolean; retryInMs: number | null; giveUpAfterMs: number }): Promise<DeliveryRow['state']> {
    const [row] = await this.#all<{ state: DeliveryRow['state'] }>(
      `update "alert_delivery" set
         "state" = case when ? then 'delivered'
                        when ?::bigint is null or "created_at" + ? * interval '1 millisecond' < now() + coalesce(?::bigint, 0) * interval '1 millisecond' then 'failed'
                        else 'pending' end,
         "next_attempt_at" = now() + coalesce(?::bigint, 0) * interval '1 millisecond',
         "locked_until" = null,
         "last_status" = ?, "last_latency_ms" = ?, "last_response" = ?, "last_error" = ?,
         "history" = "history" || ?::jsonb
       where "id" = ? returning "state"`,
      [
        outcome.delivered,
        outcome.retryInMs,
        outcome.giveUpAfterMs,
        outcome.retryInMs,
        outcome.retryInMs,
        attempt.status,
        attempt.latencyMs,
        attempt.response,
        attempt.error,
        JSON.stringify([attempt]),
        id,
      ],
    );
    const state = row?.state ?? 'failed';
    if (state !== 'pending') await this.#all(`update "alert_delivery" set "finished_at" = now() where "id" = ?`, [id]);
    return state;
  }
}

/** `smallint[]` as the driver returns it: an array (pg) or its text form (`{80,100}`). */
function parseIntArray(value: number[] | string): number[] {
  if (Array.isArray(value)) return value.map(Number);
  return value.replace(/[{}]/g, '').split(',').filter(Boolean).map(Number);
}

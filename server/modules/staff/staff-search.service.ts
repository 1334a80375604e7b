/**
 * The staff search box (`staffSearch`, issue 49 item 6): one query finds accounts, organisations, API
 * keys, requests and orders, read by the shape of what was typed —
 *
 *   a uuid                    → the account, organisation, key or application with that id
 *   svc_live_… / svc_ent_…    → keys: the whole key (by its hash), `prefix…last4` as lists show it, or a prefix
 *   mbr_…                     → requests: svc's request id, or the x-svc-request-id a client sent
 *   svc + 24 letters/digits   → the order with that number (and anything else the text starts)
 *   @acme                     → accounts whose email domain starts with it
 *   text with an @            → accounts whose email starts with it
 *   anything else             → organisations whose name starts with it, accounts whose email (or, with a
 *                               dot, whose domain) starts with it, and an order whose provider trade number it is
 *
 * Every lookup is one index range scan or key lookup (Migration20261208010000), read in index order and cut
 * at `SEARCH_LIMIT`: the answer costs the same at a thousand accounts or a million. The SQL is exported so
 * test/integration/staff/search-plan.test.ts can EXPLAIN exactly these texts.
 */
import type { Database } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { formatMinor } from '../../config/money.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import * as authz from '../../authz/authz.ts';
import type { AccountView } from '../account/account.service.ts';
import { paymentProviderIds } from '../billing/providers/provider.ts';
import { organisationKey } from '../enterprise/enterprise.input.ts';
import { sha256Hex, tokenPrefixes } from '../identity/credential-token.ts';
import { requestIdPattern, usageRecordsWithId, type UsageKey, type UsageRecord } from '../usage/usage.history.ts';
import { accountColumns, accountView, emailMatch, likeEscape, looksLikeDomain, type AccountRow } from './account-match.ts';

export type SearchHitKind = 'account' | 'organisation' | 'api_key' | 'request' | 'order' | 'application';

/** Which field of the record the text matched. */
export type SearchMatch = 'id' | 'email' | 'email_domain' | 'organisation_name' | 'key' | 'key_prefix' | 'request_id' | 'client_request_id' | 'order_id' | 'trade_number';

/** How the text was read. */
export type SearchShape = 'id' | 'key' | 'request' | 'order' | 'email' | 'domain' | 'text';

export interface SearchOrder {
  id: string;
  state: string;
  packageId: string;
  provider: string;
  amountMinor: number;
  amount: string;
  currency: string;
  providerTradeNo: string | null;
  createdAt: Date;
}

export interface SearchApplication {
  id: string;
  organisation: string;
  state: string;
  kind: string;
  createdAt: Date;
}

export interface SearchHit {
  kind: SearchHitKind;
  /** The record's id: the account's, the key's, the request's (mbr_…), the order number, the application's. */
  id: string;
  matched: SearchMatch;
  /** The account the record belongs to (itself for an account or organisation; the owner of a key; the payer of a request or order). */
  account: AccountView | null;
  organisationName: string | null;
  key: UsageKey | null;
  request: UsageRecord | null;
  order: SearchOrder | null;
  application: SearchApplication | null;
}

export interface SearchResult {
  query: string;
  shape: SearchShape;
  hits: SearchHit[];
  /** Some lookup had more matches than it returned: type more of it. */
  truncated: boolean;
}

/** Hits per lookup: a search box answers with a handful and asks for more text, it does not page. */
export const SEARCH_LIMIT = 10;
const maxQueryLength = 254;

const ACCOUNT = accountColumns('a');
const providers = paymentProviderIds.map((id) => `'${id}'`).join(', ');

/** The lookups, each served by one index (see the migration); `?` are bound in the order written. */
export const SEARCH_SQL = {
  accountById: `select ${ACCOUNT} from "account" a where a."id" = ?`,
  emailPrefix: (match: { sql: string; order: string }) => `select ${ACCOUNT} from "account" a where ${match.sql} and a."kind" = 'person' order by ${match.order} limit ?`,
  organisationName: `select o."name" as "organisation_name", ${ACCOUNT} from "organisation" o join "account" a on a."id" = o."id"
    where o."name_key" like ? escape '!' order by o."name_key" using ~<~ limit ?`,
  keyById: keySql(`k."id" = ?`),
  keyByHash: keySql(`k."token_hash" = ?`),
  keyByPrefix: keySql(`k."prefix" like ? escape '!'`, `order by k."prefix" using ~<~ limit ?`),
  keyByParts: keySql(`k."prefix" = ? and k."last4" = ?`, 'limit ?'),
  order: `select "id", "state", "package_id", "provider", "amount_minor", "currency", "provider_trade_no", "created_at", "account_id" from "billing_order"
    where "id" = ? or ("provider" in (${providers}) and "provider_trade_no" = ?) limit ?`,
  applicationById: `select "id", "organisation", "state", "kind", "created_at", "account_id" from "enterprise_application" where "id" = ?`,
} as const;

function keySql(where: string, tail = ''): string {
  return `select k."id" as "key_id", k."kind" as "key_kind", k."name" as "key_name", k."prefix" as "key_prefix", k."last4" as "key_last4",
      k."revoked_at" is not null as "key_revoked", o."name" as "organisation_name", ${ACCOUNT}
    from "api_key" k join "account" a on a."id" = k."account_id" left join "organisation" o on o."id" = a."id"
    where ${where} ${tail}`;
}

interface KeyHitRow extends AccountRow {
  key_id: string;
  key_kind: 'personal' | 'enterprise';
  key_name: string;
  key_prefix: string;
  key_last4: string;
  key_revoked: boolean;
  organisation_name: string | null;
}

interface OrderRow {
  id: string;
  state: string;
  package_id: string;
  provider: string;
  amount_minor: number;
  currency: string;
  provider_trade_no: string | null;
  created_at: Date | string;
  account_id: string;
}

interface ApplicationRow {
  id: string;
  organisation: string;
  state: string;
  kind: string;
  created_at: Date | string;
  account_id: string;
}

/** Where hits come from: each returns at most `SEARCH_LIMIT + 1` so `truncated` can be told. */
type Lookup = () => Promise<SearchHit[]>;

export class StaffSearch {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Everything `query` finds, exact matches first (staff: `account:read`; orders need `order:read`). */
  async search(actor: authz.Actor, query: string): Promise<SearchResult> {
    authz.assert(actor, 'account:read');
    const text = query.normalize('NFC').trim();
    if (text.length === 0 || text.length > maxQueryLength) {
      throw new AppError('invalid_request', bilingual('query must be 1 to {max} characters.', 'query 须为 1 到 {max} 个字符。', { max: maxQueryLength }), { param: 'query' });
    }
    const orders = authz.can(actor, 'order:read');
    const { shape, lookups } = this.#plan(text, orders);
    let truncated = false;
    const hits: SearchHit[] = [];
    const seen = new Set<string>();
    for (const found of await Promise.all(lookups.map((lookup) => lookup()))) {
      if (found.length > SEARCH_LIMIT) truncated = true;
      for (const hit of found.slice(0, SEARCH_LIMIT)) {
        const key = `${hit.kind}:${hit.id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        hits.push(hit);
      }
    }
    return { query: text, shape, hits, truncated };
  }

  #plan(text: string, orders: boolean): { shape: SearchShape; lookups: Lookup[] } {
    if (isUuid(text.toLowerCase())) {
      const id = text.toLowerCase();
      return { shape: 'id', lookups: [() => this.#accountById(id), () => this.#keys(SEARCH_SQL.keyById, [id], 'id'), () => this.#applicationById(id)] };
    }
    if (text.startsWith(tokenPrefixes.personalKey) || text.startsWith(tokenPrefixes.enterpriseKey)) return { shape: 'key', lookups: [this.#keyLookup(text)] };
    if (text.startsWith('mbr_')) return { shape: 'request', lookups: [() => this.#requests(text)] };
    const email = emailMatch(text, 'a');
    if (text.startsWith('@')) return { shape: 'domain', lookups: [() => this.#emails(email, 'email_domain')] };
    if (text.includes('@')) return { shape: 'email', lookups: [() => this.#emails(email, 'email')] };
    const lookups: Lookup[] = [() => this.#organisations(text), () => this.#emails(email, 'email')];
    // `acme.com`: the accounts at that domain too.
    if (looksLikeDomain(text)) lookups.push(() => this.#emails(emailMatch(`@${text}`, 'a'), 'email_domain'));
    // An order number, or a provider's trade number (no spaces): exact lookups, nearly free.
    if (orders && /^[\x21-\x7e]{6,255}$/.test(text)) lookups.unshift(() => this.#orders(text));
    return { shape: /^svc[A-Za-z0-9]{20,29}$/.test(text) ? 'order' : 'text', lookups };
  }

  /** A whole key (by its SHA-256), `svc_live_AbC…wxyz` as lists print it, or the start of one (by prefix). */
  #keyLookup(text: string): Lookup {
    const parts = /^(\S{1,16}?)(?:…|\.\.\.)(\S{4})$/.exec(text);
    if (parts) return () => this.#keys(SEARCH_SQL.keyByParts, [parts[1]!, parts[2]!, SEARCH_LIMIT + 1], 'key_prefix');
    if (text.length > 40) return () => this.#keys(SEARCH_SQL.keyByHash, [sha256Hex(text)], 'key');
    const prefix = text.slice(0, 12);
    return () => this.#keys(SEARCH_SQL.keyByPrefix, [`${likeEscape(prefix)}%`, SEARCH_LIMIT + 1], 'key_prefix');
  }

  async #accountById(id: string): Promise<SearchHit[]> {
    return (await this.#rows<AccountRow>(SEARCH_SQL.accountById, [id])).map((row) => accountHit(row, 'id', null));
  }

  async #emails(match: { sql: string; pattern: string; order: string }, matched: SearchMatch): Promise<SearchHit[]> {
    return (await this.#rows<AccountRow>(SEARCH_SQL.emailPrefix(match), [match.pattern, SEARCH_LIMIT + 1])).map((row) => accountHit(row, matched, null));
  }

  async #organisations(text: string): Promise<SearchHit[]> {
    const rows = await this.#rows<AccountRow & { organisation_name: string }>(SEARCH_SQL.organisationName, [`${likeEscape(organisationKey(text))}%`, SEARCH_LIMIT + 1]);
    return rows.map((row) => accountHit(row, 'organisation_name', row.organisation_name));
  }

  async #keys(sql: string, params: unknown[], matched: SearchMatch): Promise<SearchHit[]> {
    return (await this.#rows<KeyHitRow>(sql, params)).map((row) => ({
      ...emptyHit('api_key', row.key_id, matched),
      account: accountView(row),
      organisationName: row.organisation_name,
      key: { id: row.key_id, kind: row.key_kind, name: row.key_name, prefix: row.key_prefix, last4: row.key_last4, revoked: row.key_revoked },
    }));
  }

  async #requests(text: string): Promise<SearchHit[]> {
    if (!requestIdPattern.test(text)) return [];
    const records = await usageRecordsWithId(this.#db, text, SEARCH_LIMIT + 1);
    const payers = await this.#accountsById(records.map((record) => record.payerId));
    return records.map((record) => ({
      ...emptyHit('request', record.requestId, record.requestId === text ? 'request_id' : 'client_request_id'),
      account: payers.get(record.payerId) ?? null,
      request: record,
    }));
  }

  async #orders(text: string): Promise<SearchHit[]> {
    const rows = await this.#rows<OrderRow>(SEARCH_SQL.order, [text, text, SEARCH_LIMIT + 1]);
    const payers = await this.#accountsById(rows.map((row) => row.account_id));
    return rows.map((row) => ({
      ...emptyHit('order', row.id, row.id === text ? 'order_id' : 'trade_number'),
      account: payers.get(row.account_id) ?? null,
      order: {
        id: row.id,
        state: row.state,
        packageId: row.package_id,
        provider: row.provider,
        amountMinor: row.amount_minor,
        amount: formatMinor(row.amount_minor, row.currency.trim()),
        currency: row.currency.trim(),
        providerTradeNo: row.provider_trade_no,
        createdAt: new Date(row.created_at),
      },
    }));
  }

  async #applicationById(id: string): Promise<SearchHit[]> {
    const rows = await this.#rows<ApplicationRow>(SEARCH_SQL.applicationById, [id]);
    const applicants = await this.#accountsById(rows.map((row) => row.account_id));
    return rows.map((row) => ({
      ...emptyHit('application', row.id, 'id'),
      account: applicants.get(row.account_id) ?? null,
      application: { id: row.id, organisation: row.organisation, state: row.state, kind: row.kind, createdAt: new Date(row.created_at) },
    }));
  }

  async #accountsById(ids: string[]): Promise<Map<string, AccountView>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.#rows<AccountRow>(`select ${ACCOUNT} from "account" a where a."id" = any(?::uuid[])`, [`{${unique.join(',')}}`]);
    return new Map(rows.map((row) => [row.id, accountView(row)]));
  }

  #rows<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.#db.orm.em.getConnection().execute<T[]>(sql, params, 'all');
  }
}

function emptyHit(kind: SearchHitKind, id: string, matched: SearchMatch): SearchHit {
  return { kind, id, matched, account: null, organisationName: null, key: null, request: null, order: null, application: null };
}

function accountHit(row: AccountRow, matched: SearchMatch, organisationName: string | null): SearchHit {
  const organisation = row.kind === 'organisation';
  return { ...emptyHit(organisation ? 'organisation' : 'account', row.id, matched), account: accountView(row), organisationName: organisation ? (organisationName ?? row.display_name) : null };
}

/**
 * GET (or POST, for alert webhooks) a URL that someone else chose (`svc search ingest`, a member's webhook) without letting it
 * reach what only this machine can: https only (plain http just for listed hosts); every host resolved and
 * every address it resolves to checked against the blocked ranges (blocked-addresses.ts) before connecting,
 * on the first request and on each redirect (followed here, at most 5); the connection pinned to the
 * addresses that were checked (the socket's lookup answers from the checked list, so a DNS answer that
 * changes between check and connect is never used); one deadline for the whole exchange, and a byte cap.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { classifyAddress, embeddedIpv4, type BlockedRange } from './blocked-addresses.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** How host names become addresses; `node:dns` `lookup` (the system resolver, /etc/hosts included) by default. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface ResponseHead {
  /** The URL that answered (after redirects). */
  url: URL;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Redirects followed to get here. */
  redirects: number;
}

export interface SafeFetchOptions {
  /** The whole exchange: every lookup, connection, redirect and the body. */
  timeoutMs: number;
  maxBytes: number;
  /** At most 5. */
  maxRedirects?: number;
  /** Hosts that may be fetched over plain http (exact names or IP literals, case-insensitive). */
  allowHttpHosts?: readonly string[];
  /**
   * Hosts that may resolve to loopback, private, link-local or CGNAT addresses (an intranet, a test
   * server). Only while every URL of the chain so far was on a listed host: an unlisted page cannot
   * redirect into a listed one. Metadata, multicast, reserved and unspecified addresses stay refused.
   */
  allowPrivateHosts?: readonly string[];
  headers?: Record<string, string>;
  /** `POST` sends `body` (a webhook); a redirect is then refused rather than followed with the body again. Default `GET`. */
  method?: 'GET' | 'POST';
  body?: string;
  /** Read before the body: throw to refuse the answer without reading it (its status, type, size). */
  onHead?: (head: ResponseHead) => void;
  resolve?: Resolver;
}

export interface FetchedResponse extends ResponseHead {
  body: Buffer;
}

/** The rule a refused URL broke. */
export type SafeFetchRule = 'url' | 'https' | 'address' | 'redirects';

/** The URL was not fetched (or its redirect not followed) because a rule forbids it. */
export class SafeFetchRefused extends Error {
  override name = 'SafeFetchRefused';
  readonly rule: SafeFetchRule;
  /** The URL that broke it: the one asked for, or a redirect's target. */
  readonly url: string;
  /** Whether that URL came from a redirect. */
  readonly redirected: boolean;
  /**
   * `address` only: the blocked address and its range; whether a listed host may reach that range, and
   * whether this host is listed (then an unlisted host earlier in the chain is why it was refused).
   */
  readonly blocked: { host: string; address: string; range: BlockedRange; exemptable: boolean; hostListed: boolean } | null;

  constructor(rule: SafeFetchRule, message: string, details: { url: string; redirected: boolean; blocked?: SafeFetchRefused['blocked'] }) {
    super(message);
    this.rule = rule;
    this.url = details.url;
    this.redirected = details.redirected;
    this.blocked = details.blocked ?? null;
  }
}

/** The fetch was allowed but did not complete: too slow, too big, or the network failed. */
export class SafeFetchFailed extends Error {
  override name = 'SafeFetchFailed';
  readonly kind: 'timeout' | 'too_large' | 'network';
  /** `too_large`: the cap, and the declared size when the server declared one. */
  readonly limit: number | null;
  readonly size: number | null;

  constructor(kind: SafeFetchFailed['kind'], message: string, sizes: { limit?: number; size?: number | null } = {}, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
    this.limit = sizes.limit ?? null;
    this.size = sizes.size ?? null;
  }
}

export const maxRedirectsAllowed = 5;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

export async function safeFetch(input: string | URL, options: SafeFetchOptions): Promise<FetchedResponse> {
  const maxRedirects = options.method === 'POST' ? 0 : Math.min(options.maxRedirects ?? maxRedirectsAllowed, maxRedirectsAllowed);
  const httpHosts = hostSet(options.allowHttpHosts);
  const privateHosts = hostSet(options.allowPrivateHosts);
  const resolve = options.resolve ?? systemResolver;
  const deadline = AbortSignal.timeout(options.timeoutMs);
  // What each host was checked to resolve to; the sockets connect to these and nothing else.
  const pinned = new Map<string, ResolvedAddress[]>();
  const agent = new Agent({
    connect: { lookup: pinnedLookup(pinned), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  let url = typeof input === 'string' ? parseUrl(input) : input;
  let chainListed = true;
  try {
    for (let redirects = 0; ; redirects += 1) {
      const redirected = redirects > 0;
      checkUrl(url, httpHosts, redirected);
      const host = hostOf(url);
      chainListed &&= privateHosts.has(host);
      pinned.set(host, await checkedAddresses(url, { host, listed: privateHosts.has(host), chainListed }, redirected, resolve, deadline));
      const response = await request(url, { dispatcher: agent, method: options.method ?? 'GET', headers: requestHeaders(options.headers), body: options.body, signal: deadline });
      const location = header(response.headers.location);
      if (redirectStatuses.has(response.statusCode) && location) {
        await discard(response);
        if (redirects >= maxRedirects) {
          throw new SafeFetchRefused('redirects', `more than ${maxRedirects} redirects`, { url: url.href, redirected });
        }
        url = redirectTarget(location, url);
        continue;
      }
      const head: ResponseHead = { url, status: response.statusCode, headers: response.headers, redirects };
      try {
        options.onHead?.(head);
      } catch (error) {
        await discard(response);
        throw new CallerRefusal(error);
      }
      return { ...head, body: await readCapped(response, options.maxBytes) };
    }
  } catch (error) {
    throw failure(error, deadline, options.timeoutMs);
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new SafeFetchRefused('url', 'not a valid URL', { url: text, redirected: false });
  }
}

function redirectTarget(location: string, from: URL): URL {
  try {
    return new URL(location, from);
  } catch {
    throw new SafeFetchRefused('url', `redirected to ${JSON.stringify(location.slice(0, 200))}, which is not a valid URL`, { url: location, redirected: true });
  }
}

function checkUrl(url: URL, httpHosts: ReadonlySet<string>, redirected: boolean): void {
  const where = redirected ? `redirected to ${url.href}; ` : '';
  if (url.protocol === 'http:') {
    if (!httpHosts.has(hostOf(url))) throw new SafeFetchRefused('https', `${where}plain http is not fetched from ${url.hostname}`, { url: url.href, redirected });
  } else if (url.protocol !== 'https:') {
    throw new SafeFetchRefused('https', `${where}only https is fetched, not ${url.protocol.slice(0, -1)}`, { url: url.href, redirected });
  }
  // Credentials in a URL would be sent to whichever host it names, redirects included.
  if (url.username || url.password) throw new SafeFetchRefused('url', `${where}URLs with a user name or password are not fetched`, { url: url.href, redirected });
}

/** Resolves `host` (unless it is an address) and refuses it if any address it resolves to is blocked. */
async function checkedAddresses(
  url: URL,
  { host, listed, chainListed }: { host: string; listed: boolean; chainListed: boolean },
  redirected: boolean,
  resolve: Resolver,
  deadline: AbortSignal,
): Promise<ResolvedAddress[]> {
  const literal = isIP(host);
  const addresses: ResolvedAddress[] = literal ? [{ address: host, family: literal as 4 | 6 }] : await resolveBefore(host, resolve, deadline);
  if (addresses.length === 0) throw new SafeFetchFailed('network', `${host} does not resolve`);
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    if (!kind.blocked || (kind.exemptable && chainListed)) continue;
    const where = redirected ? `redirected to ${url.href}; ` : '';
    const inside = embeddedIpv4(address);
    const shown = inside ? `${address} (${inside})` : address;
    const what = literal ? `${shown} is` : `${host} resolves to ${shown},`;
    throw new SafeFetchRefused('address', `${where}${what} ${article(kind.range)} ${kind.range} address`, {
      url: url.href,
      redirected,
      blocked: { host, address, range: kind.range, exemptable: kind.exemptable, hostListed: listed },
    });
  }
  return addresses;
}

async function resolveBefore(host: string, resolve: Resolver, deadline: AbortSignal): Promise<ResolvedAddress[]> {
  deadline.throwIfAborted();
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(deadline.reason as Error);
    deadline.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([resolve(host), aborted]);
  } catch (error) {
    if (deadline.aborted) throw error;
    throw new SafeFetchFailed('network', `${host} does not resolve (${(error as { code?: string }).code ?? (error as Error).message})`, {}, { cause: error });
  } finally {
    deadline.removeEventListener('abort', onAbort);
  }
}

const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/** A socket `lookup` that only knows the checked addresses: connecting never asks DNS again. */
function pinnedLookup(pinned: ReadonlyMap<string, ResolvedAddress[]>): LookupFunction {
  return (hostname, options, callback) => {
    const addresses = pinned.get(hostname.toLowerCase().replace(/\.$/, ''));
    if (!addresses) {
      callback(Object.assign(new Error(`${hostname} was not checked before connecting`), { code: 'ENOTFOUND' }), '', 4);
      return;
    }
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = family ? addresses.filter((entry) => entry.family === family) : addresses;
    if (options.all) callback(null, usable);
    else if (usable[0]) callback(null, usable[0].address, usable[0].family);
    else callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '', family || 4);
  };
}

async function readCapped(response: Dispatcher.ResponseData, maxBytes: number): Promise<Buffer> {
  const declared = Number(header(response.headers['content-length']));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discard(response);
    throw new SafeFetchFailed('too_large', `larger than ${maxBytes} bytes (${declared})`, { limit: maxBytes, size: declared });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      response.body.destroy();
      throw new SafeFetchFailed('too_large', `larger than ${maxBytes} bytes`, { limit: maxBytes });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function discard(response: Dispatcher.ResponseData): Promise<void> {
  // A small leftover is read so the socket can be reused; anything bigger closes it.
  await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
}

/** What `onHead` threw, passed through untouched. */
class CallerRefusal {
  readonly error: unknown;
  constructor(error: unknown) {
    this.error = error;
  }
}

function failure(error: unknown, deadline: AbortSignal, timeoutMs: number): unknown {
  if (error instanceof CallerRefusal) return error.error;
  if (error instanceof SafeFetchRefused || error instanceof SafeFetchFailed) return error;
  if (deadline.aborted) return new SafeFetchFailed('timeout', `no complete answer within ${timeoutMs} ms`, {}, { cause: error });
  const code = (error as { code?: string }).code;
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new SafeFetchFailed('timeout', `no complete answer within ${timeoutMs} ms`, {}, { cause: error });
  }
  return new SafeFetchFailed('network', `could not fetch it: ${cause ?? code ?? (error as Error).message}`, {}, { cause: error });
}

function requestHeaders(headers: Record<string, string> = {}): Record<string, string> {
  // Compressed answers are not asked for: the byte cap then also caps what is decoded.
  return { 'accept-encoding': 'identity', ...headers };
}

/** A host as compared with the lists: lower case, no IPv6 brackets, no trailing dot. */
function hostOf(url: URL): string {
  return normaliseHost(url.hostname);
}

function normaliseHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

function hostSet(hosts: readonly string[] = []): ReadonlySet<string> {
  return new Set(hosts.map(normaliseHost));
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function article(range: BlockedRange): string {
  return /^[aeiou]/i.test(range) ? 'an' : 'a';
}

/**
 * One HTTP call to a search provider with the failure mapping every HTTP provider shares: one deadline for
 * the whole exchange (connect, headers and body), a cap on the answer's size, and transport errors
 * turned into `SearchProviderError`s. Messages name the provider, never its URL (they reach clients).
 *
 * undici's `request`, not `fetch`: a search is one small JSON exchange on the request path, and fetch's
 * WHATWG layers (Request/Response objects, a web stream for the body) cost more CPU per call than the rest
 * of the provider call together — about 0.6 ms of a loaded core per search, measured side by side.
 */
import { Agent, interceptors, type Dispatcher } from 'undici';
import type { SearchProviderName } from '../../../config/config.ts';
import { SearchProviderError, type ProviderFailureCode } from '../search.provider.ts';

/** No search answer is anywhere near this; a bigger one is a misconfigured or hostile server. */
const maxAnswerBytes = 5 * 1024 * 1024;

export interface ProviderCall {
  provider: SearchProviderName;
  /** How messages name the provider: `SearXNG`, `Brave Search`, `Tavily`. */
  label: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface ProviderReply {
  status: number;
  text: string;
}

/** Kept-alive connections to the providers, following redirects as fetch did. */
const dispatcher = new Agent({ keepAliveTimeout: 30_000 }).compose(interceptors.redirect({ maxRedirections: 5 }));

export async function callProvider(call: ProviderCall): Promise<ProviderReply> {
  const deadline = AbortSignal.timeout(call.timeoutMs);
  const signal = call.signal ? AbortSignal.any([call.signal, deadline]) : deadline;
  const fail = (code: ProviderFailureCode, message: string, cause?: unknown, upstreamStatus?: number) =>
    new SearchProviderError(call.provider, code, message, { cause, upstreamStatus });
  const failed = (error: unknown, upstreamStatus?: number): Error => {
    if (call.signal?.aborted) return call.signal.reason as Error;
    if (deadline.aborted) return fail('upstream_timeout', `${call.label} did not answer within ${call.timeoutMs} ms.`, error, upstreamStatus);
    return transportFailure(call, error, upstreamStatus);
  };
  let response: Dispatcher.ResponseData;
  try {
    response = await dispatcher.request({
      ...originAndPath(call.url),
      method: call.method ?? 'GET',
      headers: { accept: 'application/json', ...call.headers },
      body: call.body,
      signal,
    });
  } catch (error) {
    throw failed(error);
  }
  try {
    return { status: response.statusCode, text: await readCapped(response, call) };
  } catch (error) {
    if (error instanceof SearchProviderError) throw error;
    throw failed(error, response.statusCode);
  }
}

function originAndPath(url: string): { origin: string; path: string } {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

async function readCapped(response: Dispatcher.ResponseData, call: ProviderCall): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > maxAnswerBytes) {
      response.body.destroy();
      throw new SearchProviderError(call.provider, 'upstream_error', `${call.label} sent an answer larger than ${maxAnswerBytes / 1024 / 1024} MiB.`, { upstreamStatus: response.statusCode });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const unreachableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const timeoutCodes = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** The socket error's code, on the error or (as some layers wrap it) on its `cause`. */
function transportFailure(call: ProviderCall, error: unknown, upstreamStatus?: number): SearchProviderError {
  const code = errorCode(error);
  if (code && timeoutCodes.has(code)) {
    return new SearchProviderError(call.provider, 'upstream_timeout', `${call.label} did not answer in time (${code}).`, { cause: error, upstreamStatus });
  }
  if (code && unreachableCodes.has(code)) {
    return new SearchProviderError(call.provider, 'upstream_unavailable', `${call.label} is unreachable (${code}).`, { cause: error, upstreamStatus });
  }
  return new SearchProviderError(call.provider, 'upstream_error', `The call to ${call.label} failed: ${(error as Error).message}.`, { cause: error, upstreamStatus });
}

function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** The usual reading of a non-2xx status; providers handle their own special cases first. */
export function statusFailure(call: Pick<ProviderCall, 'provider' | 'label'>, reply: ProviderReply): SearchProviderError {
  const { status } = reply;
  const detail = errorDetail(reply.text);
  const suffix = detail ? `: ${detail}` : '.';
  if (status === 408 || status === 504) {
    return new SearchProviderError(call.provider, 'upstream_timeout', `${call.label} timed out (HTTP ${status})${suffix}`, { upstreamStatus: status });
  }
  if (status === 429 || status === 502 || status === 503) {
    const why = status === 429 ? 'is rate-limiting svc' : 'is unavailable';
    return new SearchProviderError(call.provider, 'upstream_unavailable', `${call.label} ${why} (HTTP ${status})${suffix}`, { upstreamStatus: status });
  }
  if (status === 401 || status === 403) {
    return new SearchProviderError(call.provider, 'upstream_error', `${call.label} refused svc's API key (HTTP ${status})${suffix}`, { upstreamStatus: status });
  }
  return new SearchProviderError(call.provider, 'upstream_error', `${call.label} answered HTTP ${status}${suffix}`, { upstreamStatus: status });
}

/** A short, single-line reason from an error body (JSON `message`/`detail`/`error`, or the text). */
function errorDetail(text: string): string {
  let detail = text;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const nested = (value: unknown, key: string) => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);
    const candidate = [body.message, body.detail, body.error, nested(body.error, 'message'), nested(body.error, 'detail'), nested(body.detail, 'error')]
      .find((value) => typeof value === 'string');
    if (typeof candidate === 'string') detail = candidate;
    else if (typeof body.detail === 'object' && body.detail) detail = JSON.stringify(body.detail);
  } catch {
    // Not JSON: an HTML error page or plain text.
    if (/^\s*</.test(text)) return '';
  }
  return detail.replace(/\s+/g, ' ').trim().slice(0, 200);
}

export function parseJson(call: Pick<ProviderCall, 'provider' | 'label'>, reply: ProviderReply): unknown {
  try {
    return JSON.parse(reply.text);
  } catch (error) {
    throw new SearchProviderError(call.provider, 'upstream_error', `${call.label} answered with a body that is not JSON.`, { cause: error, upstreamStatus: reply.status });
  }
}

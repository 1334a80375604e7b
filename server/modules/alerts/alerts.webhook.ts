/**
 * Signed webhooks, verified the way Stripe's are. Each delivery is a POST of a JSON body with
 *
 *   Svc-Webhook-Id: <delivery id>            the same on every retry of one delivery (deduplicate on it)
 *   Svc-Timestamp:  <unix seconds>           when this attempt was signed
 *   Svc-Signature:  v1=<hex HMAC-SHA256(secret, "<Svc-Timestamp>.<raw body>")>
 *
 * A receiver recomputes the HMAC over the raw bytes it received, compares in constant time, and refuses a
 * timestamp more than 5 minutes from its clock (a replayed request). The secret (`whsec_…`) is shown once
 * when set or rotated.
 *
 * URLs are checked twice: when set (https only in production; plain http only to localhost outside it; no
 * credentials; no literal blocked address) and at each delivery by `safeFetch` (SECURITY.md: every address
 * the host resolves to is checked and the connection pinned to it; redirects are not followed).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { classifyAddress } from '../../infra/blocked-addresses.ts';
import { SafeFetchFailed, SafeFetchRefused, safeFetch } from '../../infra/safe-fetch.ts';

const signatureHeader = 'svc-signature';
const timestampHeader = 'svc-timestamp';
const webhookIdHeader = 'svc-webhook-id';

/** Hosts a development or test server may deliver to over plain http (and on loopback). */
const localHosts = ['localhost', '127.0.0.1', '::1'];

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** `v1=<hex>` for a body signed at `timestamp` (unix seconds). */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The URL a member may set, normalised; throws `invalid_request` naming what is wrong. */
export function checkWebhookUrl(text: string, production: boolean): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new AppError('invalid_request', bilingual('The webhook URL is not a valid URL.', 'Webhook 地址不是有效的 URL。'), { param: 'url' });
  }
  if (url.href.length > 2048) throw new AppError('invalid_request', bilingual('The webhook URL is longer than 2048 characters.', 'Webhook 地址超过 2048 个字符。'), { param: 'url' });
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const local = !production && localHosts.includes(host);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) {
    throw new AppError(
      'invalid_request',
      production
        ? bilingual('The webhook URL must use https.', 'Webhook 地址必须使用 https。')
        : bilingual('The webhook URL must use https (plain http only to localhost while not in production).', 'Webhook 地址必须使用 https（非生产环境下仅 localhost 可用 http）。'),
      { param: 'url' },
    );
  }
  if (url.username || url.password) throw new AppError('invalid_request', bilingual('The webhook URL must not carry a user name or password.', 'Webhook 地址不能包含用户名或密码。'), { param: 'url' });
  if (isIP(host) && !local) {
    const kind = classifyAddress(host);
    if (kind.blocked) {
      throw new AppError('invalid_request', bilingual('The webhook URL points at a {range} address, which svc does not call.', 'Webhook 地址指向 {range} 地址，svc 不会调用。', { range: kind.range }), { param: 'url' });
    }
  }
  return url.href;
}

export interface WebhookAnswer {
  ok: boolean;
  /** The HTTP status, or null when there was no answer. */
  status: number | null;
  latencyMs: number;
  /** The start of the answer's body (500 characters). */
  response: string | null;
  /** Why it failed, when it did without an answer (or was refused). */
  error: string | null;
  /** Retrying cannot help (the URL is refused by the address rules). */
  permanent: boolean;
}

export async function postWebhook(args: { url: string; secret: string; deliveryId: string; body: string; timeoutMs: number; production: boolean; now?: number }): Promise<WebhookAnswer> {
  const timestamp = Math.floor((args.now ?? Date.now()) / 1000);
  const started = performance.now();
  const local = args.production ? [] : localHosts;
  try {
    const answer = await safeFetch(args.url, {
      method: 'POST',
      body: args.body,
      timeoutMs: args.timeoutMs,
      maxBytes: 64 * 1024,
      allowHttpHosts: local,
      allowPrivateHosts: local,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'svc-webhooks/1',
        [webhookIdHeader]: args.deliveryId,
        [timestampHeader]: String(timestamp),
        [signatureHeader]: signWebhook(args.secret, timestamp, args.body),
      },
    });
    const latencyMs = Math.round(performance.now() - started);
    const ok = answer.status >= 200 && answer.status < 300;
    return { ok, status: answer.status, latencyMs, response: answer.body.toString('utf8').slice(0, 500), error: ok ? null : `HTTP ${answer.status}`, permanent: false };
  } catch (error) {
    const latencyMs = Math.round(performance.now() - started);
    if (error instanceof SafeFetchRefused) {
      const permanent = error.rule !== 'redirects';
      return { ok: false, status: null, latencyMs, response: null, error: error.rule === 'redirects' ? 'redirected (webhooks do not follow redirects)' : `refused: ${error.message}`.slice(0, 500), permanent };
    }
    const message = error instanceof SafeFetchFailed ? `${error.kind}: ${error.message}` : (error as Error).message;
    return { ok: false, status: null, latencyMs, response: null, error: message.slice(0, 500), permanent: false };
  }
}

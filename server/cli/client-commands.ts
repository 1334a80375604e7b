/**
 * `svc login | whoami | logout | models`: a small client of the service's own HTTP API. Login is the
 * device flow (spec §3): print the URL and code, poll at `interval`, back off 5 s more on `slow_down`.
 */
import { hostname } from 'node:os';
import { credentialsPath, deleteCredentials, readCredentials, writeCredentials } from './credentials-file.ts';
import { cliLanguage, envelopeMessage, type CliMessages } from './messages.ts';
import type { Locale } from '../i18n/locale.ts';

export interface CliContext {
  baseUrl: string;
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
  sleep?: (ms: number) => Promise<void>;
}

interface Envelope {
  ok?: boolean;
  code?: string;
  message?: string;
  messageZh?: string;
}

export class CliError extends Error {
  override name = 'CliError';
}

export async function call(say: CliMessages, url: string, init: RequestInit = {}, hint: 'flags' | 'stored' = 'flags'): Promise<{ status: number; body: Record<string, unknown> }> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    throw new CliError(say.cannotReach(new URL(url).origin, connectionProblem(say, error), hint === 'flags' ? say.pointElsewhere : say.pointElsewhereStored));
  }
  const text = await response.text();
  try {
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  } catch {
    throw new CliError(say.notJson(url, response.status));
  }
}

/** The server's error text in the terminal's language. */
export function serverSays(locale: Locale, result: { status: number; body: Record<string, unknown> }): string {
  return envelopeMessage(locale, result.body as Envelope, `HTTP ${result.status}`);
}

/** What went wrong with the connection, in words (fetch itself only says "fetch failed"). */
function connectionProblem(say: CliMessages, error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  switch (cause?.code) {
    case 'ECONNREFUSED':
      return say.connectionRefused;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return say.hostNotFound;
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return say.timedOut;
    default:
      return cause?.message ?? (error as Error).message;
  }
}

export async function login(context: CliContext, clientName = `svc-cli on ${hostname()}`): Promise<void> {
  const sleep = context.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  const { locale, say } = cliLanguage(context.env);
  const started = await call(say, `${context.baseUrl}/api/membership/auth/device/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client: clientName }),
  });
  if (started.status !== 200) throw new CliError(say.loginStartFailed(serverSays(locale, started)));
  const { device_code: deviceCode, user_code: userCode, verification_uri_complete: url, expires_in: expiresIn } = started.body as Record<string, string | number>;
  let interval = Number(started.body.interval ?? 5);
  context.out(say.openToSignIn(String(url)));
  context.out(say.checkCode(String(userCode)));
  const deadline = Date.now() + Number(expiresIn) * 1000;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const polled = await call(say, `${context.baseUrl}/api/membership/auth/device/poll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_code: deviceCode }),
    });
    if (polled.status === 200) {
      const account = polled.body.account as { email: string };
      writeCredentials(credentialsPath(context.env), {
        baseUrl: context.baseUrl,
        token: String(polled.body.sessionToken),
        expiresAt: String(polled.body.expiresAt),
        email: account.email,
      });
      context.out(say.signedInAs(account.email));
      return;
    }
    const envelope = polled.body as Envelope;
    switch (envelope.code) {
      case 'authorization_pending':
        continue;
      case 'slow_down':
        interval += 5;
        continue;
      case 'rate_limited':
        interval += 5;
        continue;
      case 'access_denied':
        throw new CliError(say.loginDenied);
      case 'expired_token':
        throw new CliError(say.codeExpired);
      default:
        throw new CliError(say.loginFailed(serverSays(locale, polled)));
    }
  }
  throw new CliError(say.codeExpired);
}

export function stored(context: CliContext, say: CliMessages) {
  const credentials = readCredentials(credentialsPath(context.env));
  if (!credentials) throw new CliError(say.notSignedIn);
  return credentials;
}

export async function whoami(context: CliContext): Promise<void> {
  const { locale, say } = cliLanguage(context.env);
  const credentials = stored(context, say);
  const me = await call(say, `${credentials.baseUrl}/api/membership/me`, { headers: { authorization: `Bearer ${credentials.token}` } }, 'stored');
  if (me.status === 401) throw new CliError(say.sessionInvalid);
  if (me.status !== 200) throw new CliError(say.whoamiFailed(serverSays(locale, me)));
  const account = me.body.account as { email: string; role: string; planPackage: string; planPackageUntil: string | null };
  const until = account.planPackageUntil ? new Date(account.planPackageUntil) : null;
  context.out(say.whoami({ email: account.email, plan: account.planPackage, until, role: account.role }, credentials.baseUrl));
}

export async function logout(context: CliContext): Promise<void> {
  const { say } = cliLanguage(context.env);
  const path = credentialsPath(context.env);
  const credentials = readCredentials(path);
  if (!credentials) {
    context.out(say.alreadySignedOut);
    return;
  }
  const result = await call(say, `${credentials.baseUrl}/api/membership/auth/logout`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credentials.token}` },
  }).catch((error: unknown) => {
    context.err(say.revokeFailed((error as Error).message));
    return null;
  });
  deleteCredentials(path);
  context.out(result?.status === 200 || result?.status === 401 ? say.signedOutRevoked : say.signedOutLocally);
}

export async function models(context: CliContext): Promise<void> {
  const { locale, say } = cliLanguage(context.env);
  const credentials = stored(context, say);
  const listed = await call(say, `${credentials.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${credentials.token}` } }, 'stored');
  if (listed.status === 401) throw new CliError(say.sessionInvalid);
  if (listed.status !== 200) throw new CliError(say.listModelsFailed(serverSays(locale, listed)));
  const allowed = (listed.body.data as { id: string }[]).map((model) => model.id);
  // The catalogue (names, kinds, prices, limits) is public GraphQL; /v1/models says which ids this account may use.
  const catalogue = await call(
    say,
    `${credentials.baseUrl}/graphql`,
    { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${credentials.token}` }, body: JSON.stringify({ query: catalogueQuery }) },
    'stored',
  );
  const byId = new Map(((catalogue.body.data as { models?: CatalogueModel[] } | undefined)?.models ?? []).map((model) => [model.id, model]));
  for (const line of modelTable(allowed.map((id) => byId.get(id) ?? { id }), say)) context.out(line);
}

const catalogueQuery = '{ models { id name kind class contextLength maxOutputTokens price { perTokens input { effective { amount currency } } output { effective { amount currency } } } } }';

interface CatalogueModel {
  id: string;
  name?: string;
  kind?: keyof CliMessages['modelKinds'];
  class?: string;
  contextLength?: number;
  maxOutputTokens?: number;
  price?: { perTokens: number; input: { effective: { amount: string; currency: string } }; output: { effective: { amount: string; currency: string } } };
}

/** One row per model, columns padded to fit; prices per 1M tokens in the catalogue's currency. */
export function modelTable(models: readonly CatalogueModel[], say: CliMessages): string[] {
  const currency = models.find((model) => model.price)?.price?.input.effective.currency ?? '';
  const perTokens = models.find((model) => model.price)?.price?.perTokens ?? 1_000_000;
  const per = `${currency}/${perTokens === 1_000_000 ? '1M' : perTokens}`;
  const h = say.modelsHeader;
  const header = [h.id, h.name, h.kind, h.class, `${h.input} ${per}`, `${h.output} ${per}`, h.context, h.maxOutput];
  const rows = models.map((model) => [
    model.id,
    model.name ?? '—',
    model.kind ? say.modelKinds[model.kind] : '—',
    model.class ?? '—',
    model.price?.input.effective.amount ?? '—',
    model.price?.output.effective.amount ?? '—',
    // A context window means something for text the model reads; images and audio have none worth showing.
    model.kind === 'chat' && model.contextLength ? String(model.contextLength) : '—',
    model.maxOutputTokens && (model.kind === 'chat' || model.kind === 'search') ? String(model.maxOutputTokens) : '—',
  ]);
  const widths = header.map((title, column) => Math.max(displayWidth(title), ...rows.map((row) => displayWidth(row[column]!))));
  const line = (cells: string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell + ' '.repeat(widths[column]! - displayWidth(cell)))).join('  ');
  return [line(header), ...rows.map(line), '', say.modelsPriceNote(currency, perTokens.toLocaleString('en-US'))];
}

/** Columns a string takes in a terminal: CJK characters take two. */
function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u.test(char) ? 2 : 1;
  return width;
}

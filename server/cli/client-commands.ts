/**
 * `svc login | whoami | logout | models`: a small client of the service's own HTTP API. Login is the
 * device flow (spec §3): print the URL and code, poll at `interval`, back off 5 s more on `slow_down`.
 */
import { hostname } from 'node:os';
import { credentialsPath, deleteCredentials, readCredentials, writeCredentials } from './credentials-file.ts';

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
}

export class CliError extends Error {
  override name = 'CliError';
}

/** How to point the CLI elsewhere: `login` takes the server from the flags; other commands from the stored login. */
const elsewhere = {
  flags: 'Is svc running there? Point svc at another server with --base-url URL or SVC_BASE_URL=URL (see svc --help).',
  stored: 'Is svc running there? This is the server you signed in to; to use another, run svc login --base-url URL (or set SVC_BASE_URL).',
};

async function call(url: string, init: RequestInit = {}, hint = elsewhere.flags): Promise<{ status: number; body: Record<string, unknown> }> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    throw new CliError(`cannot reach ${new URL(url).origin} (${connectionProblem(error)}). ${hint}`);
  }
  const text = await response.text();
  try {
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  } catch {
    throw new CliError(`${url} answered ${response.status} with a non-JSON body`);
  }
}

/** What went wrong with the connection, in words (fetch itself only says "fetch failed"). */
function connectionProblem(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  switch (cause?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timed out';
    default:
      return cause?.message ?? (error as Error).message;
  }
}

export async function login(context: CliContext, clientName = `svc-cli on ${hostname()}`): Promise<void> {
  const sleep = context.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  const started = await call(`${context.baseUrl}/api/membership/auth/device/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client: clientName }),
  });
  if (started.status !== 200) throw new CliError(`could not start login: ${(started.body as Envelope).message ?? started.status}`);
  const { device_code: deviceCode, user_code: userCode, verification_uri_complete: url, expires_in: expiresIn } = started.body as Record<string, string | number>;
  let interval = Number(started.body.interval ?? 5);
  context.out(`To sign in, open ${url}`);
  context.out(`and check that it shows the code ${userCode}. Waiting for approval…`);
  const deadline = Date.now() + Number(expiresIn) * 1000;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const polled = await call(`${context.baseUrl}/api/membership/auth/device/poll`, {
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
      context.out(`Signed in as ${account.email}.`);
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
        throw new CliError('the login was denied in the browser.');
      case 'expired_token':
        throw new CliError('the code expired before it was approved; run `svc login` again.');
      default:
        throw new CliError(`login failed: ${envelope.message ?? `HTTP ${polled.status}`}`);
    }
  }
  throw new CliError('the code expired before it was approved; run `svc login` again.');
}

function stored(context: CliContext) {
  const credentials = readCredentials(credentialsPath(context.env));
  if (!credentials) throw new CliError('not signed in; run `svc login`.');
  return credentials;
}

export async function whoami(context: CliContext): Promise<void> {
  const credentials = stored(context);
  const me = await call(`${credentials.baseUrl}/api/membership/me`, { headers: { authorization: `Bearer ${credentials.token}` } }, elsewhere.stored);
  if (me.status === 401) throw new CliError('the stored session is no longer valid; run `svc login`.');
  if (me.status !== 200) throw new CliError(`whoami failed: ${(me.body as Envelope).message ?? me.status}`);
  const account = me.body.account as { email: string; role: string; planPackage: string };
  context.out(`${account.email} (plan ${account.planPackage}, role ${account.role}) at ${credentials.baseUrl}`);
}

export async function logout(context: CliContext): Promise<void> {
  const path = credentialsPath(context.env);
  const credentials = readCredentials(path);
  if (!credentials) {
    context.out('Not signed in.');
    return;
  }
  const result = await call(`${credentials.baseUrl}/api/membership/auth/logout`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credentials.token}` },
  }).catch((error: unknown) => {
    context.err(`warning: could not revoke the token on the server (${(error as Error).message}); removing it locally.`);
    return null;
  });
  deleteCredentials(path);
  context.out(result?.status === 200 || result?.status === 401 ? 'Signed out; the session token is revoked.' : 'Signed out locally.');
}

export async function models(context: CliContext): Promise<void> {
  const credentials = stored(context);
  const listed = await call(`${credentials.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${credentials.token}` } }, elsewhere.stored);
  if (listed.status === 401) throw new CliError('the stored session is no longer valid; run `svc login`.');
  if (listed.status !== 200) throw new CliError(`listing models failed: ${(listed.body as Envelope).message ?? listed.status}`);
  for (const model of listed.body.data as { id: string }[]) context.out(model.id);
}

/**
 * `svc keys list | create | update | revoke`: the member's personal keys and their limits (issue 51), over
 * the same REST routes the web app's keys page uses, as the CLI signed in by device login.
 * `--budget-day 5 --budget-month 50 --rpm 30 --models a,b --expires 2027-01-31`; on update `none` lifts a
 * limit (`--budget-day none`).
 */
import { credentialsPath, readCredentials } from './credentials-file.ts';
import { CliError, type CliContext } from './client-commands.ts';
import { cliLanguage, envelopeMessage, type CliMessages } from './messages.ts';

/** The flags `svc keys` reads (parsed by bin/svc.ts). */
export interface KeyFlags {
  name?: string;
  'budget-day'?: string;
  'budget-month'?: string;
  rpm?: string;
  models?: string;
  expires?: string;
}

interface Money {
  amount: string;
  currency: string;
}

interface KeyJson {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  limits: { budgetDay: Money | null; budgetMonth: Money | null; requestsPerMinute: number | null; models: string[] | null; expiresAt: string | null; spentToday: Money; spentThisMonth: Money };
}

/** The limit fields of a request body from the flags; `none` (or an empty value) lifts a limit. */
function limitsBody(flags: KeyFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const lift = (value: string) => (value === '' || value.toLowerCase() === 'none' ? null : value);
  if (flags['budget-day'] !== undefined) body.budgetDay = lift(flags['budget-day']);
  if (flags['budget-month'] !== undefined) body.budgetMonth = lift(flags['budget-month']);
  if (flags.rpm !== undefined) body.requestsPerMinute = lift(flags.rpm);
  if (flags.models !== undefined) body.models = lift(flags.models)?.split(',') ?? null;
  if (flags.expires !== undefined) body.expiresAt = lift(flags.expires);
  return body;
}

export async function keys(context: CliContext, args: readonly string[], flags: KeyFlags): Promise<number> {
  const { locale, say } = cliLanguage(context.env);
  const credentials = readCredentials(credentialsPath(context.env));
  if (!credentials) throw new CliError(say.notSignedIn);
  const [sub, id] = args;
  const request = async (method: string, path: string, body?: unknown) => {
    let response: Response;
    try {
      response = await fetch(`${credentials.baseUrl}/api/membership/auth/api-keys${path}`, {
        method,
        headers: { authorization: `Bearer ${credentials.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new CliError(say.cannotReach(credentials.baseUrl, (error as Error).message, say.pointElsewhereStored));
    }
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.status === 401 && json.code === 'sign_in_required') throw new CliError(say.sessionInvalid);
    if (!response.ok) throw new CliError(say.keysFailed(envelopeMessage(locale, json, `HTTP ${response.status}`)));
    return json;
  };
  switch (sub) {
    case 'list': {
      const listed = (await request('GET', '')) as { keys: KeyJson[] };
      if (listed.keys.length === 0) context.out(say.noKeys);
      for (const key of listed.keys) for (const line of describe(key, say)) context.out(line);
      return 0;
    }
    case 'create': {
      if (!flags.name) throw new CliError(say.keysUsage);
      const created = (await request('POST', '', { name: flags.name, ...limitsBody(flags) })) as unknown as KeyJson & { token: string };
      context.out(say.keyCreated(created.token));
      for (const line of describe(created, say)) context.out(line);
      return 0;
    }
    case 'update': {
      const body = { ...(flags.name === undefined ? {} : { name: flags.name }), ...limitsBody(flags) };
      if (!id || Object.keys(body).length === 0) throw new CliError(say.keysUsage);
      const updated = (await request('PATCH', `/${encodeURIComponent(id)}`, body)) as { key: KeyJson };
      for (const line of describe(updated.key, say)) context.out(line);
      return 0;
    }
    case 'revoke': {
      if (!id) throw new CliError(say.keysUsage);
      await request('DELETE', `/${encodeURIComponent(id)}`);
      context.out(say.keyRevoked(id));
      return 0;
    }
    default:
      context.err(say.keysUsage);
      return 2;
  }
}

/** A key in two lines: who it is, then its limits with today's and this month's spend. */
function describe(key: KeyJson, say: CliMessages): string[] {
  const { limits } = key;
  const cap = (spent: Money, limit: Money | null) => (limit ? `${spent.amount}/${limit.amount} ${limit.currency}` : `${spent.amount} ${spent.currency}`);
  return [
    `${key.id}  ${key.name}  ${key.prefix}…${key.last4}`,
    `  ${say.keyLimits({
      today: cap(limits.spentToday, limits.budgetDay),
      month: cap(limits.spentThisMonth, limits.budgetMonth),
      rpm: limits.requestsPerMinute === null ? null : String(limits.requestsPerMinute),
      models: limits.models?.join(',') ?? null,
      expires: limits.expiresAt,
    })}`,
  ];
}

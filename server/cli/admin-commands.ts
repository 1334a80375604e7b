/**
 * `svc admin create-user`: bootstraps staff accounts against the configured database. The password is never
 * an argument (argv is visible to every user in `ps` and kept in shell history): it is typed at a prompt
 * without echo, or piped on stdin; or the account gets no password and an email sign-in code.
 *
 * With the embedded database (no DATABASE_URL) a running svc holds it (PGlite allows one process per data
 * directory): the command then asks that server to do it, over its loopback-only channel
 * (`local-admin.rest.ts`), and says plainly to stop the server first when that is not possible.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pino } from 'pino';
import { loadConfig, type Config, type Env } from '../config/config.ts';
import { openDatabase } from '../db/orm.ts';
import { entities } from '../modules/entities.ts';
import { DatabaseInUseError } from '../db/pglite-lock.ts';
import { openRedis } from '../infra/redis.ts';
import { accountRoles, type AccountRole } from '../authz/principal.ts';
import { bootstrapUser, type BootstrapInput, type BootstrapResult } from '../modules/account/bootstrap-user.ts';
import { localAdminCreateUserPath, localAdminFileName, type LocalAdminHandle } from '../modules/account/local-admin.rest.ts';
import { createServices } from '../services.ts';
import { CliError } from './client-commands.ts';
import { cliLanguage, envelopeMessage, type CliMessages } from './messages.ts';
import type { Locale } from '../i18n/locale.ts';

export interface CreateUserInput {
  email?: string;
  password?: string;
  role?: string;
  'email-code'?: boolean;
}

export interface PasswordSource {
  /** Reads the password: at a prompt without echo on a terminal, else the first line of stdin. */
  read(): Promise<string>;
}

export async function createUser(env: Env, input: CreateUserInput, out: (line: string) => void, passwords: PasswordSource = stdinPassword()): Promise<void> {
  const { locale, say } = cliLanguage(env);
  if (input.password !== undefined) throw new CliError(say.passwordRefused);
  if (!input.email) throw new CliError(say.createUserUsage);
  const role = (input.role ?? 'member') as AccountRole;
  if (!accountRoles.includes(role)) throw new CliError(say.roleMustBe(accountRoles.join(', ')));
  const emailCode = input['email-code'] === true;
  const request: BootstrapInput = { email: input.email, password: emailCode ? null : await passwords.read(), role, emailCode };
  const config = loadConfig(env);
  let result: BootstrapResult;
  try {
    result = await directly(config, request);
  } catch (error) {
    if (!(error instanceof DatabaseInUseError)) throw error;
    result = await throughRunningServer(config, request, error, locale, say);
    out(say.viaRunningServer);
  }
  out(say.userSaved(result.created, result.account));
  const code = result.signInCode;
  if (code) {
    const signIn = `${config.server.webUrl}/account`;
    const minutes = Math.round(config.auth.emailCodeTtlSeconds / 60);
    out(code.emailed ? say.codeSent(result.account.email, minutes, signIn) : say.codeShown(code.code ?? '?', minutes, signIn));
  }
}

/** Opens the database itself (PostgreSQL, or PGlite when no server holds it). */
async function directly(config: Config, request: BootstrapInput): Promise<BootstrapResult> {
  const log = pino({ level: 'warn' });
  const db = await openDatabase(config, log, entities);
  const redis = await openRedis(config, log).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  const services = createServices(config, db, redis, log);
  try {
    return await bootstrapUser(services, request, 'svc admin create-user');
  } finally {
    services.identity.close();
    await services.lastUsed.close();
    await Promise.allSettled([db.close(), redis.close()]);
  }
}

/** The svc that holds the embedded database does it, if it left its handle (and still answers on it). */
async function throughRunningServer(config: Config, request: BootstrapInput, inUse: DatabaseInUseError, locale: Locale, say: CliMessages): Promise<BootstrapResult> {
  const dataDir = resolve(config.database.dataDir);
  const stopFirst = (why: string) => new CliError(say.stopServerFirst(dataDir, inUse.holder, why));
  let handle: LocalAdminHandle;
  try {
    handle = JSON.parse(readFileSync(resolve(dataDir, localAdminFileName), 'utf8')) as LocalAdminHandle;
  } catch {
    throw stopFirst(say.noLocalAdminHandle);
  }
  if (handle.pid !== inUse.holder) throw stopFirst(say.noLocalAdminHandle);
  let response: Response;
  try {
    response = await fetch(`http://127.0.0.1:${handle.port}${localAdminCreateUserPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${handle.token}` },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw stopFirst((error as Error).message);
  }
  const body = (await response.json().catch(() => ({}))) as Partial<BootstrapResult> & { message?: string; messageZh?: string };
  if (response.status === 404) throw stopFirst(say.noLocalAdminHandle);
  if (response.status !== 200 || !body.account) throw new CliError(envelopeMessage(locale, body, `HTTP ${response.status}`));
  return body as BootstrapResult;
}

/** The password from the terminal (asked twice, not echoed) or, when stdin is not a terminal, its first line. */
export function stdinPassword(stdin: NodeJS.ReadStream = process.stdin, prompt: NodeJS.WriteStream = process.stderr): PasswordSource {
  return {
    read: async () => {
      if (!stdin.isTTY) {
        const line = await firstLine(stdin);
        if (!line) throw new CliError('no password on stdin: pipe it in, or run svc admin create-user --email <email> at a terminal to be asked.');
        return line;
      }
      const terminal = hiddenLines(stdin, prompt);
      let first: string;
      let second: string;
      try {
        first = await terminal.ask('Password: ');
        second = await terminal.ask('Repeat the password: ');
      } finally {
        terminal.close();
      }
      if (first !== second) throw new CliError('the two passwords differ; nothing was changed.');
      return first;
    },
  };
}

/** Reads up to the first newline (or the end), then stops reading. */
function firstLine(stdin: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = () => {
      stdin.off('data', onData).off('end', done).off('error', reject);
      stdin.pause();
      resolve(text.split(/\r?\n/)[0] ?? '');
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) done();
    };
    stdin.on('data', onData).on('end', done).on('error', reject);
  });
}

/**
 * Lines typed at the terminal with echo off (raw mode, so nothing typed is shown); Ctrl-C, or Ctrl-D on an
 * empty line, cancels. What was typed ahead of a question answers it.
 */
function hiddenLines(stdin: NodeJS.ReadStream, output: NodeJS.WriteStream): { ask(question: string): Promise<string>; close(): void } {
  let buffered = '';
  let waiting: { resolve: (line: string) => void; reject: (error: Error) => void; line: string } | null = null;
  const pump = () => {
    if (!waiting) return;
    while (buffered.length > 0) {
      const char = buffered[0]!;
      buffered = buffered.slice(1);
      if (char === '\r' || char === '\n') {
        // A CR LF pair is one Enter.
        if (char === '\r' && buffered[0] === '\n') buffered = buffered.slice(1);
        const done = waiting;
        waiting = null;
        output.write('\n');
        return done.resolve(done.line);
      }
      if (char === '\u0003' || (char === '\u0004' && waiting.line === '')) {
        const done = waiting;
        waiting = null;
        output.write('\n');
        return done.reject(new CliError('cancelled; nothing was changed.'));
      }
      if (char === '\u007f' || char === '\b') waiting.line = waiting.line.slice(0, -1);
      else if (char >= ' ') waiting.line += char;
    }
  };
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    pump();
  };
  stdin.setRawMode(true);
  stdin.resume();
  stdin.on('data', onData);
  return {
    ask: (question) =>
      new Promise((resolve, reject) => {
        output.write(question);
        waiting = { resolve, reject, line: '' };
        pump();
      }),
    close: () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
    },
  };
}

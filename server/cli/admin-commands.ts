/**
 * `svc admin create-user`: bootstraps staff accounts straight against the configured database. The password
 * is never an argument (argv is visible to every user in `ps` and kept in shell history): it is typed at a
 * prompt without echo, or piped on stdin; or the account gets no password and an email sign-in code.
 */
import { pino } from 'pino';
import { loadConfig, type Env } from '../config/config.ts';
import { openDatabase } from '../db/orm.ts';
import { openRedis } from '../infra/redis.ts';
import { accountRoles, type AccountRole } from '../modules/account/account.entity.ts';
import { createServices } from '../services.ts';
import { CliError } from './client-commands.ts';

export const createUserUsage = 'svc admin create-user --email <email> [--role member|support|admin] [--email-code]';

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
  if (input.password !== undefined) {
    throw new CliError(
      '--password is not accepted: command-line arguments are visible to other users (ps) and stay in shell history. ' +
        'Type the password when asked, pipe it on stdin (e.g. `svc admin create-user --email E < password.txt`), or use --email-code.',
    );
  }
  if (!input.email) throw new CliError(`usage: ${createUserUsage}`);
  const role = (input.role ?? 'member') as AccountRole;
  if (!accountRoles.includes(role)) throw new CliError(`--role must be one of ${accountRoles.join(', ')}`);
  const emailCode = input['email-code'] === true;
  const password = emailCode ? null : await passwords.read();
  const config = loadConfig(env);
  const log = pino({ level: 'warn' });
  const db = await openDatabase(config, log);
  const redis = await openRedis(config, log).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  const services = createServices(config, db, redis, log);
  try {
    const { account, created, previousRole } = await services.accounts.createUser({ email: input.email, password, role });
    await services.audit.record({
      actorId: null,
      action: 'admin:create-user',
      targetType: 'account',
      targetId: account.id,
      before: created ? null : { role: previousRole },
      after: { role: account.role, password: password === null ? 'unchanged' : 'set', emailCode },
      reason: 'svc admin create-user',
    });
    out(`${created ? 'Created' : 'Updated'} ${account.email} with role ${account.role} (id ${account.id}).`);
    if (emailCode) {
      await services.accounts.startEmailCode({ email: account.email });
      const signIn = `${config.server.webUrl}/account`;
      if (services.mailer.mode === 'smtp') out(`Sent a sign-in code to ${account.email}; it works for ${Math.round(config.auth.emailCodeTtlSeconds / 60)} minutes at ${signIn}.`);
      else {
        // No SMTP: the code only went to the development outbox, which lives in this process. Show it here.
        const code = /\b(\d{6})\b/.exec(services.mailer.lastTo(account.email)?.text ?? '')?.[1];
        out(`mail.smtp is not configured, so nothing was emailed. The sign-in code is ${code} (valid ${Math.round(config.auth.emailCodeTtlSeconds / 60)} minutes at ${signIn}).`);
      }
    }
  } finally {
    services.identity.close();
    await services.lastUsed.close();
    await Promise.allSettled([db.close(), redis.close()]);
  }
}

/** The password from the terminal (asked twice, not echoed) or, when stdin is not a terminal, its first line. */
export function stdinPassword(stdin: NodeJS.ReadStream = process.stdin, prompt: NodeJS.WriteStream = process.stderr): PasswordSource {
  return {
    read: async () => {
      if (!stdin.isTTY) {
        const line = await firstLine(stdin);
        if (!line) throw new CliError(`no password on stdin: pipe it in, or run ${createUserUsage.split(' [')[0]} at a terminal to be asked.`);
        return line;
      }
      const first = await hiddenLine(stdin, prompt, 'Password: ');
      const second = await hiddenLine(stdin, prompt, 'Repeat the password: ');
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

/** One line typed at the terminal with echo off; Ctrl-C or Ctrl-D cancels. */
function hiddenLine(stdin: NodeJS.ReadStream, output: NodeJS.WriteStream, question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    output.write(question);
    let line = '';
    const finish = (error: Error | null) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      output.write('\n');
      if (error) reject(error);
      else resolve(line);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish(null);
        if (char === '\u0003' || (char === '\u0004' && line === '')) return finish(new CliError('cancelled; nothing was changed.'));
        if (char === '\u007f' || char === '\b') line = line.slice(0, -1);
        else if (char >= ' ') line += char;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

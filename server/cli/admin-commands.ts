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
import { cliLanguage } from './messages.ts';

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
  const { say } = cliLanguage(env);
  if (input.password !== undefined) throw new CliError(say.passwordRefused);
  if (!input.email) throw new CliError(say.createUserUsage);
  const role = (input.role ?? 'member') as AccountRole;
  if (!accountRoles.includes(role)) throw new CliError(say.roleMustBe(accountRoles.join(', ')));
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
    out(say.userSaved(created, account));
    if (emailCode) {
      await services.accounts.startEmailCode({ email: account.email });
      const signIn = `${config.server.webUrl}/account`;
      const minutes = Math.round(config.auth.emailCodeTtlSeconds / 60);
      if (services.mailer.mode === 'smtp') out(say.codeSent(account.email, minutes, signIn));
      else {
        // No SMTP: the code only went to the development outbox, which lives in this process. Show it here.
        const code = /\b(\d{6})\b/.exec(services.mailer.lastTo(account.email)?.text ?? '')?.[1];
        out(say.codeShown(code ?? '?', minutes, signIn));
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

#!/usr/bin/env node
/**
 * The `svc` command: `login`, `whoami`, `logout`, `models` talk to a running server (base URL from
 * --base-url, SVC_BASE_URL, or http://localhost:8080); `admin create-user`, `search ingest` and
 * `search stats` work on the configured database directly (same environment as the server:
 * DATABASE_URL, REDIS_URL, SVC_CONFIG). `admin create-user` reads the password from a prompt or stdin,
 * never from argv.
 */
import { parseArgs } from 'node:util';
import { createUser } from '../server/cli/admin-commands.ts';
import { CliError, login, logout, models, whoami, type CliContext } from '../server/cli/client-commands.ts';
import { searchIngest, searchStats } from '../server/cli/search-commands.ts';
import { cliLanguage } from '../server/cli/messages.ts';
import { AppError } from '../server/errors/app-error.ts';

// Messages follow the terminal: LC_ALL, LC_MESSAGES or LANG (zh_CN.UTF-8 → Chinese), else English.
const { locale, say } = cliLanguage(process.env);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      client: { type: 'string' },
      email: { type: 'string' },
      // Declared only to refuse it with a reason: a password in argv leaks into ps and shell history.
      password: { type: 'string' },
      'email-code': { type: 'boolean' },
      role: { type: 'string' },
      'timeout-ms': { type: 'string' },
      'max-bytes': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const context: CliContext = {
    baseUrl: (values['base-url'] ?? process.env.SVC_BASE_URL ?? 'http://localhost:8080').replace(/\/+$/, ''),
    env: process.env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  };
  const [command, sub] = positionals;
  if (values.help || !command) {
    context.out(say.usage);
    return values.help ? 0 : 2;
  }
  switch (command) {
    case 'login':
      await login(context, values.client);
      return 0;
    case 'whoami':
      await whoami(context);
      return 0;
    case 'logout':
      await logout(context);
      return 0;
    case 'models':
      await models(context);
      return 0;
    case 'admin':
      if (sub !== 'create-user') break;
      await createUser(process.env, values, context.out);
      return 0;
    case 'search': {
      const io = { out: context.out, write: (text: string) => void process.stdout.write(text), tty: process.stdout.isTTY === true, columns: process.stdout.columns };
      if (sub === 'ingest') return searchIngest(process.env, positionals.slice(2), values, io);
      if (sub === 'stats') return searchStats(process.env, io);
      break;
    }
  }
  context.err(`${say.unknownCommand(positionals.join(' '))}\n${say.usage}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known = error instanceof CliError || error instanceof AppError || ['ConfigError', 'DatabaseInUseError'].includes((error as { name?: string }).name ?? '') || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const message = error instanceof AppError ? error.messageIn(locale) : (error as Error).message;
    process.stderr.write(`svc: ${known ? message : (error as Error).stack}\n`);
    process.exit(1);
  },
);

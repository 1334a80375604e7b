#!/usr/bin/env node
/**
 * The `svc` command: `login`, `whoami`, `logout`, `models`, `keys` talk to a running server (base URL from
 * --base-url, SVC_BASE_URL, or http://localhost:8080); `admin create-user`, `search ingest` and
 * `search stats` and `ledger archive|restore|check` work on the configured database directly (same environment as the server:
 * DATABASE_URL, REDIS_URL, SVC_CONFIG) — `admin create-user` through the running server when it holds the
 * embedded database. It reads the password from a prompt or stdin, never from argv.
 */
import { parseArgs } from 'node:util';
import { createUser } from '../server/cli/admin-commands.ts';
import { CliError, login, logout, models, whoami, type CliContext } from '../server/cli/client-commands.ts';
import { ledgerCommand } from '../server/cli/ledger-commands.ts';
import { keys } from '../server/cli/key-commands.ts';
import { alerts } from '../server/cli/alert-commands.ts';
import { searchIngest, searchStats } from '../server/cli/search-commands.ts';
import { credits, mintCodes, redeem } from '../server/cli/credit-commands.ts';
import { exportCsv } from '../server/cli/export-commands.ts';
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
      before: { type: 'string' },
      dir: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      name: { type: 'string' },
      'budget-day': { type: 'string' },
      'budget-month': { type: 'string' },
      rpm: { type: 'string' },
      models: { type: 'string' },
      expires: { type: 'string' },
      org: { type: 'string' },
      value: { type: 'string' },
      count: { type: 'string' },
      uses: { type: 'string' },
      note: { type: 'string' },
      granularity: { type: 'string' },
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
    case 'keys':
      return keys(context, positionals.slice(1), values);
    case 'alerts':
      return alerts(context, positionals.slice(1), values);
    case 'admin':
      if (sub !== 'create-user') break;
      await createUser(process.env, values, context.out);
      return 0;
    case 'credits':
      if (sub === undefined) await credits(context);
      else if (sub === 'redeem') await redeem(context, positionals[2]);
      else if (sub === 'mint') await mintCodes(process.env, values, { write: (text) => void process.stdout.write(text), err: context.err });
      else break;
      return 0;
    case 'export':
      await exportCsv(context, sub, values, (chunk) => new Promise<void>((resolve) => (process.stdout.write(chunk) ? resolve() : process.stdout.once('drain', resolve))));
      return 0;
    case 'search': {
      const io = { out: context.out, write: (text: string) => void process.stdout.write(text), tty: process.stdout.isTTY === true, columns: process.stdout.columns };
      if (sub === 'ingest') return searchIngest(process.env, positionals.slice(2), values, io);
      if (sub === 'stats') return searchStats(process.env, io);
      break;
    }
    case 'ledger': {
      const code = await ledgerCommand(process.env, sub, positionals.slice(2), values, say, context.out);
      if (code !== null) return code;
      break;
    }
  }
  context.err(`${say.unknownCommand(positionals.join(' '))}\n${say.usage}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known = error instanceof CliError || error instanceof AppError || ['ConfigError', 'DatabaseInUseError', 'LedgerArchiveError'].includes((error as { name?: string }).name ?? '') || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const messageZh = (error as { messageZh?: unknown }).messageZh;
    const message = error instanceof AppError ? error.messageIn(locale) : locale === 'zh-CN' && typeof messageZh === 'string' ? messageZh : (error as Error).message;
    process.stderr.write(`svc: ${known ? message : (error as Error).stack}\n`);
    process.exit(1);
  },
);

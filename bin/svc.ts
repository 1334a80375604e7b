#!/usr/bin/env node
/**
 * The `svc` command: `login`, `whoami`, `logout`, `models` talk to a running server (base URL from
 * --base-url, SVC_BASE_URL, or http://localhost:8080); `admin create-user` writes to the configured
 * database directly (same environment as the server: DATABASE_URL, REDIS_URL, SVC_CONFIG).
 */
import { parseArgs } from 'node:util';
import { createUser } from '../server/cli/admin-commands.ts';
import { CliError, login, logout, models, whoami, type CliContext } from '../server/cli/client-commands.ts';
import { AppError } from '../server/errors/app-error.ts';

const usage = `usage:
  svc login [--base-url URL] [--client NAME]   sign this machine in by device code
  svc whoami                                  show the signed-in account
  svc logout                                  revoke the stored session token
  svc models                                  list the models you may use
  svc admin create-user --email E --password P [--role member|support|admin]

The server: --base-url URL, or the environment variable SVC_BASE_URL, or http://localhost:8080.
whoami, models and logout use the server you signed in to.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      client: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
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
    context.out(usage);
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
  }
  context.err(`unknown command: ${positionals.join(' ')}\n${usage}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known = error instanceof CliError || error instanceof AppError || (error as { name?: string }).name === 'ConfigError' || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`svc: ${known ? (error as Error).message : (error as Error).stack}\n`);
    process.exit(1);
  },
);

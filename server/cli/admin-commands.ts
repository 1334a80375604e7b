/** `svc admin create-user`: bootstraps staff accounts straight against the configured database. */
import { pino } from 'pino';
import { loadConfig, type Env } from '../config/config.ts';
import { openDatabase } from '../db/orm.ts';
import { openRedis } from '../infra/redis.ts';
import { accountRoles, type AccountRole } from '../modules/account/account.entity.ts';
import { createServices } from '../services.ts';
import { CliError } from './client-commands.ts';
import { cliLanguage } from './messages.ts';

export async function createUser(env: Env, input: { email?: string; password?: string; role?: string }, out: (line: string) => void): Promise<void> {
  const { say } = cliLanguage(env);
  if (!input.email || !input.password) throw new CliError(say.createUserUsage);
  const role = (input.role ?? 'member') as AccountRole;
  if (!accountRoles.includes(role)) throw new CliError(say.roleMustBe(accountRoles.join(', ')));
  const config = loadConfig(env);
  const log = pino({ level: 'warn' });
  const db = await openDatabase(config, log);
  const redis = await openRedis(config, log).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  const services = createServices(config, db, redis, log);
  try {
    const { account, created } = await services.accounts.createUser({ email: input.email, password: input.password, role });
    out(say.userSaved(created, account));
  } finally {
    services.identity.close();
    await services.lastUsed.close();
    await Promise.allSettled([db.close(), redis.close()]);
  }
}

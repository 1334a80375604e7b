/**
 * `svc credits`, `svc credits redeem CODE` (the signed-in member, over the server's REST API) and
 * `svc credits mint …` (the operator, on the server's database like `svc admin create-user`: minting is
 * a staff action, and staff act over HTTP only from a web session). `svc export …` streams a CSV from
 * the server to standard output as it arrives.
 */
import { pino } from 'pino';
import { loadConfig, type Env } from '../config/config.ts';
import { openDatabase } from '../db/orm.ts';
import { entities } from '../modules/entities.ts';
import { openRedis } from '../infra/redis.ts';
import { createServices } from '../services.ts';
import { call, CliError, serverSays, stored, type CliContext } from './client-commands.ts';
import { cliLanguage } from './messages.ts';

interface EntryJson {
  at: string;
  kind: 'purchase' | 'code' | 'spend' | 'refund' | 'adjustment';
  amount: { amount: string };
  balanceAfter: { amount: string };
  reference: string | null;
}

export async function credits(context: CliContext): Promise<void> {
  const { locale, say } = cliLanguage(context.env);
  const credentials = stored(context, say);
  const headers = { authorization: `Bearer ${credentials.token}` };
  const summary = await call(say, `${credentials.baseUrl}/api/membership/credits`, { headers }, 'stored');
  if (summary.status === 401) throw new CliError(say.sessionInvalid);
  if (summary.status !== 200) throw new CliError(say.creditsFailed(serverSays(locale, summary)));
  const credit = summary.body.credit as { balance: { amount: string; currency: string }; payFromCredit: boolean };
  context.out(say.creditBalance(credit.balance.amount, credit.balance.currency, credit.payFromCredit));
  const listed = await call(say, `${credentials.baseUrl}/api/membership/credits/entries?first=20`, { headers }, 'stored');
  if (listed.status !== 200) throw new CliError(say.creditsFailed(serverSays(locale, listed)));
  const entries = listed.body.entries as EntryJson[];
  if (entries.length === 0) {
    context.out(say.noCreditEntries);
    return;
  }
  const h = say.creditEntriesHeader;
  const rows = [[h.at, h.kind, h.amount, h.balance, h.reference], ...entries.map((entry) => [entry.at.slice(0, 19).replace('T', ' '), say.creditKinds[entry.kind], entry.amount.amount, entry.balanceAfter.amount, entry.reference ?? ''])];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
  context.out('');
  for (const row of rows) context.out(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
}

export async function redeem(context: CliContext, code: string | undefined): Promise<void> {
  const { locale, say } = cliLanguage(context.env);
  if (!code) throw new CliError(say.redeemUsage);
  const credentials = stored(context, say);
  const result = await call(
    say,
    `${credentials.baseUrl}/api/membership/credits/redeem`,
    { method: 'POST', headers: { authorization: `Bearer ${credentials.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ code }) },
    'stored',
  );
  if (result.status === 401) throw new CliError(say.sessionInvalid);
  if (result.status !== 200) throw new CliError(serverSays(locale, result));
  const entry = result.body.entry as EntryJson & { amount: { currency: string } };
  context.out(say.redeemed(entry.amount.amount, entry.amount.currency, entry.balanceAfter.amount));
}

export interface MintFlags {
  value?: string;
  count?: string;
  uses?: string;
  expires?: string;
  note?: string;
}

/** Mints on the configured database and writes the batch's CSV to `write`; the summary goes to `err`. */
export async function mintCodes(env: Env, flags: MintFlags, io: { write: (text: string) => void; err: (line: string) => void }): Promise<void> {
  const { say } = cliLanguage(env);
  if (!flags.value || !flags.count) throw new CliError(say.mintUsage);
  const config = loadConfig(env);
  const log = pino({ level: 'warn' });
  const db = await openDatabase(config, log, entities);
  const redis = await openRedis(config, log).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  const services = createServices(config, db, redis, log);
  try {
    const { batch } = await services.credits.mintAsSystem(
      { value: flags.value, count: Number(flags.count), usesPerCode: flags.uses ? Number(flags.uses) : null, expiresAt: flags.expires ?? null, note: flags.note ?? null },
      null,
    );
    io.write(await services.credits.batchCsvOf(batch.id));
    io.err(say.minted(batch.codeCount, batch.value.amount, batch.value.currency, batch.id));
  } finally {
    services.identity.close();
    await services.lastUsed.close();
    await Promise.allSettled([db.close(), redis.close()]);
  }
}

/**
 * `svc export usage|payments|credits --from DATE --to DATE [--granularity request|day] > file.csv`: the
 * server streams the CSV and this writes each chunk to standard output as it arrives (nothing is held).
 */
import { call, CliError, serverSays, stored, type CliContext } from './client-commands.ts';
import { cliLanguage } from './messages.ts';

const kinds = ['usage', 'payments', 'credits'];

export async function exportCsv(
  context: CliContext,
  kind: string | undefined,
  flags: { from?: string; to?: string; granularity?: string },
  write: (chunk: Uint8Array) => Promise<void>,
): Promise<void> {
  const { locale, say } = cliLanguage(context.env);
  if (!kind || !kinds.includes(kind) || !flags.from || !flags.to) throw new CliError(say.exportUsage);
  const credentials = stored(context, say);
  const query = new URLSearchParams({ from: flags.from, to: flags.to, ...(flags.granularity ? { granularity: flags.granularity } : {}) });
  const url = `${credentials.baseUrl}/api/membership/exports/${kind}.csv?${query}`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${credentials.token}` } });
  } catch {
    // The same words as every other command for a server that does not answer.
    await call(say, url, { headers: { authorization: `Bearer ${credentials.token}` } }, 'stored');
    throw new CliError(say.exportFailed(url));
  }
  if (response.status === 401) throw new CliError(say.sessionInvalid);
  if (response.status !== 200 || !response.body) {
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // not an envelope
    }
    throw new CliError(say.exportFailed(serverSays(locale, { status: response.status, body })));
  }
  for await (const chunk of response.body) await write(chunk);
}

/**
 * `svc search ingest <files|dir|urls.txt|URL>…` and `svc search stats`: the embedded search index, written
 * straight to the configured database (DATABASE_URL, or embedded PGlite under database.dataDir — stop a
 * server using the same PGlite directory first: PGlite allows one process at a time).
 */
import { pino } from 'pino';
import { loadConfig, type Config, type Env } from '../config/config.ts';
import { openDatabase, type Database } from '../db/orm.ts';
import { entities } from '../modules/entities.ts';
import { SearchDocuments } from '../modules/search/search.documents.ts';
import { collectSources, defaultIngestOptions, formatBytes, ingest, type IngestEvent, type IngestOptions } from '../modules/search/search.ingest.ts';
import { CliError } from './client-commands.ts';

export interface SearchCliIo {
  out: (line: string) => void;
  /** Raw writes for the progress bar (no newline added). */
  write: (text: string) => void;
  /** Draw a progress bar (stdout is a terminal) instead of one line per source. */
  tty: boolean;
  columns?: number;
}

export interface IngestFlags {
  'base-url'?: string;
  'timeout-ms'?: string;
  'max-bytes'?: string;
}

const outcomeWidth = 'unchanged'.length;

/** Returns the process exit code: 0 when every source was ingested or unchanged, 1 when any failed. */
export async function searchIngest(env: Env, inputs: string[], flags: IngestFlags, io: SearchCliIo): Promise<number> {
  if (inputs.length === 0) throw new CliError('usage: svc search ingest <file|directory|urls.txt|URL>… [--base-url URL] [--timeout-ms N] [--max-bytes N]');
  const config = loadConfig(env);
  const options: IngestOptions = {
    baseUrl: flags['base-url'] ? checkedBaseUrl(flags['base-url']) : undefined,
    timeoutMs: positive(flags['timeout-ms'], '--timeout-ms') ?? defaultIngestOptions.timeoutMs,
    maxBytes: positive(flags['max-bytes'], '--max-bytes') ?? defaultIngestOptions.maxBytes,
    allowHttpHosts: config.search.ingest.allowHttpHosts,
    allowPrivateHosts: config.search.ingest.allowPrivateHosts,
  };
  const sources = await collectSources(inputs);
  if (sources.length === 0) throw new CliError(`nothing to ingest: no .md, .markdown, .html, .htm or .txt files in ${inputs.join(', ')}`);
  return withDatabase(config, async (db) => {
    const progress = new Progress(sources.length, io);
    const summary = await ingest(new SearchDocuments(db), sources, options, (event, done) => progress.report(event, done));
    progress.finish();
    const seconds = ((summary.finishedAt.getTime() - summary.startedAt.getTime()) / 1000).toFixed(1);
    io.out(`${summary.added} added, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.failed} failed (${sources.length} sources, ${seconds} s).`);
    return summary.failed > 0 ? 1 : 0;
  });
}

export async function searchStats(env: Env, io: Pick<SearchCliIo, 'out'>): Promise<number> {
  return withDatabase(loadConfig(env), async (db) => {
    const stats = await new SearchDocuments(db).stats();
    const run = stats.lastRun;
    io.out(`Documents:   ${stats.documents}`);
    io.out(`Total size:  ${formatBytes(stats.totalBytes)}`);
    io.out(`Last ingest: ${run ? `${run.finishedAt.toISOString()} (${run.added} added, ${run.updated} updated, ${run.unchanged} unchanged, ${run.failed} failed)` : 'never'}`);
    io.out(`Last change: ${stats.lastChangedAt?.toISOString() ?? 'never'}`);
    if (stats.topDomains.length > 0) {
      io.out('Top domains:');
      const width = String(stats.topDomains[0]!.documents).length;
      for (const { domain, documents } of stats.topDomains) io.out(`  ${String(documents).padStart(width)}  ${domain}`);
    }
    return 0;
  });
}

async function withDatabase(config: Config, work: (db: Database) => Promise<number>): Promise<number> {
  const db = await openDatabase(config, pino({ level: 'warn' }), entities);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

/** One line per source, or on a terminal a bar redrawn in place with failures printed above it. */
class Progress {
  readonly #total: number;
  readonly #io: SearchCliIo;

  constructor(total: number, io: SearchCliIo) {
    this.#total = total;
    this.#io = io;
    if (io.tty) this.#draw(0, '');
  }

  report(event: IngestEvent, done: number): void {
    const { source, outcome } = event;
    const line = `${outcome.padEnd(outcomeWidth)}  ${source.label}${outcome === 'failed' ? `: ${event.reason}` : event.url && event.url !== source.label ? ` → ${event.url}` : ''}`;
    if (!this.#io.tty) return this.#io.out(line);
    if (outcome === 'failed') this.#io.write(`\r\x1b[K${line}\n`);
    this.#draw(done, source.label);
  }

  finish(): void {
    if (this.#io.tty) this.#io.write('\r\x1b[K');
  }

  #draw(done: number, label: string): void {
    const width = 24;
    const filled = Math.round((done / this.#total) * width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.#total}`;
    const room = (this.#io.columns ?? 80) - bar.length - 3;
    const shown = label.length > room ? `…${label.slice(label.length - room + 1)}` : label;
    this.#io.write(`\r\x1b[K${bar}  ${room > 0 ? shown : ''}`);
  }
}

function checkedBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`--base-url must be an absolute http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--base-url must be an http(s) URL, got ${JSON.stringify(value)}`);
  return url.href;
}

function positive(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw new CliError(`${flag} must be a positive whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

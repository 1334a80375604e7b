/**
 * `svc search ingest`: turns files, directories, `urls.txt` lists and URLs into documents of the embedded
 * index. Idempotent: a document is keyed by its URL and rewritten only when its content hash changed.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';
import { SafeFetchFailed, SafeFetchRefused, safeFetch } from '../../infra/safe-fetch.ts';
import { extractDocument, formatOfContentType, formatOfPath, type DocumentFormat } from './search.extract.ts';
import type { DocumentInput, SearchDocuments, UpsertOutcome } from './search.documents.ts';

export interface IngestOptions {
  /** Where files without a `url:` live on the web: `<baseUrl>/<path relative to the ingested directory>`. */
  baseUrl?: string;
  /** Per fetched URL, the whole exchange. */
  timeoutMs: number;
  /** Largest file or page read. */
  maxBytes: number;
  /** Hosts fetched over plain http (`search.ingest.allowHttpHosts`); every other URL must be https. */
  allowHttpHosts?: readonly string[];
  /** Hosts that may resolve to loopback or private addresses (`search.ingest.allowPrivateHosts`). */
  allowPrivateHosts?: readonly string[];
}

export const defaultIngestOptions: IngestOptions = { timeoutMs: 15_000, maxBytes: 10 * 1024 * 1024 };

/** Something to ingest: a file or a URL, or an input that already failed (reported, never thrown). */
export interface IngestSource {
  /** What progress lines show: the path or URL. */
  label: string;
  load(options: IngestOptions): Promise<DocumentInput>;
}

export interface IngestEvent {
  source: IngestSource;
  outcome: UpsertOutcome | 'failed';
  /** The document's URL when it was loaded. */
  url?: string;
  /** Why it failed. */
  reason?: string;
}

export interface IngestSummary {
  added: number;
  updated: number;
  unchanged: number;
  failed: number;
  startedAt: Date;
  finishedAt: Date;
}

export class IngestError extends Error {
  override name = 'IngestError';
}

/** Expands the command's arguments into sources, in a stable order (directories sorted by path). */
export async function collectSources(inputs: readonly string[]): Promise<IngestSource[]> {
  const sources: IngestSource[] = [];
  for (const input of inputs) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) {
      sources.push(urlSource(input));
      continue;
    }
    const path = resolve(input);
    const info = await stat(path).catch(() => null);
    if (!info) sources.push(failedSource(input, 'no such file or directory'));
    else if (info.isDirectory()) sources.push(...(await walk(path)).map((file) => fileSource(file, path, join(input, relative(path, file)))));
    else if (await isUrlList(path, info.size)) sources.push(...(await urlListSources(path)));
    else if (formatOfPath(path)) sources.push(fileSource(path, dirname(path), input));
    else sources.push(failedSource(input, 'not a Markdown, HTML or text file (.md, .markdown, .html, .htm, .txt)'));
  }
  return sources;
}

/** Loads and stores every source in order; `onEvent` hears about each one as it finishes. */
export async function ingest(
  documents: SearchDocuments,
  sources: readonly IngestSource[],
  options: IngestOptions,
  onEvent: (event: IngestEvent, done: number) => void = () => undefined,
): Promise<IngestSummary> {
  const summary: IngestSummary = { added: 0, updated: 0, unchanged: 0, failed: 0, startedAt: new Date(), finishedAt: new Date() };
  let done = 0;
  for (const source of sources) {
    let event: IngestEvent;
    try {
      const document = await source.load(options);
      event = { source, outcome: await documents.upsert(document), url: document.url };
    } catch (error) {
      event = { source, outcome: 'failed', reason: error instanceof Error ? error.message : String(error) };
    }
    summary[event.outcome] += 1;
    onEvent(event, ++done);
  }
  summary.finishedAt = new Date();
  await documents.recordRun(summary);
  return summary;
}

async function walk(directory: string): Promise<string[]> {
  const files: string[] = [];
  const entries = await readdir(directory, { withFileTypes: true });
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    // Hidden files and dependency folders are never documentation someone meant to publish.
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...(await walk(path)));
    else if (entry.isFile() && formatOfPath(entry.name)) files.push(path);
  }
  return files;
}

function failedSource(label: string, reason: string): IngestSource {
  return {
    label,
    load: async () => {
      throw new IngestError(reason);
    },
  };
}

/** `root`: the directory URLs from --base-url are relative to. */
function fileSource(path: string, root: string, label: string): IngestSource {
  return {
    label,
    load: async (options) => {
      const info = await stat(path);
      if (info.size > options.maxBytes) throw new IngestError(`larger than ${formatBytes(options.maxBytes)} (${formatBytes(info.size)})`);
      const text = await readFile(path, 'utf8');
      const format = formatOfPath(path)!;
      const extracted = extract(text, format, basename(path, extname(path)));
      const url = extracted.url
        ? absolute(extracted.url, options.baseUrl, 'its url')
        : options.baseUrl
          ? absolute(relative(root, path).split(sep).map(encodeURIComponent).join('/'), options.baseUrl, '--base-url + its path')
          : null;
      if (!url) throw new IngestError('no URL: give it front matter `url: https://…` or run with --base-url');
      return { url, title: extracted.title, body: extracted.body, publishedAt: extracted.publishedAt, source: path };
    },
  };
}

function urlSource(input: string): IngestSource {
  return {
    label: input,
    load: async (options) => {
      let url: URL;
      try {
        url = new URL(input);
      } catch {
        throw new IngestError('not a valid URL');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new IngestError(`only http and https URLs are fetched, not ${url.protocol.slice(0, -1)}`);
      if (url.href.length > 2048) throw new IngestError('the URL is longer than 2048 characters');
      const page = await fetchPage(url, options);
      const fallback = lastSegment(url).replace(/\.[a-z0-9]+$/i, '') || url.hostname;
      const extracted = extract(page.text, page.format, fallback);
      return { url: url.href, title: extracted.title, body: extracted.body, publishedAt: extracted.publishedAt, source: url.href };
    },
  };
}

function lastSegment(url: URL): string {
  const segment = url.pathname.split('/').filter(Boolean).at(-1) ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A `.txt` whose every line (besides blanks and `#` comments) is a URL is a list of pages, not a document. */
async function isUrlList(path: string, size: number): Promise<boolean> {
  if (formatOfPath(path) !== 'text' || size > 1024 * 1024) return false;
  const lines = urlListLines(await readFile(path, 'utf8'));
  return lines.length > 0 && lines.every((line) => /^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(line));
}

async function urlListSources(path: string): Promise<IngestSource[]> {
  return urlListLines(await readFile(path, 'utf8')).map(urlSource);
}

function urlListLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function extract(text: string, format: DocumentFormat, fallbackTitle: string) {
  const extracted = extractDocument(text, format, fallbackTitle);
  if (!extracted.body && !extracted.title) throw new IngestError('no text in it');
  return extracted;
}

function absolute(url: string, base: string | undefined, what: string): string {
  let parsed: URL;
  try {
    parsed = base ? new URL(url, base.endsWith('/') ? base : `${base}/`) : new URL(url);
  } catch {
    throw new IngestError(`${what} ${JSON.stringify(url)} is not an absolute URL${base ? '' : ' (relative URLs need --base-url)'}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new IngestError(`${what} ${JSON.stringify(url)} is not an http(s) URL`);
  if (parsed.href.length > 2048) throw new IngestError(`${what} is longer than 2048 characters`);
  return parsed.href;
}

async function fetchPage(url: URL, options: IngestOptions): Promise<{ text: string; format: DocumentFormat }> {
  let format: DocumentFormat | null = null;
  let contentType: string | null = null;
  try {
    const page = await safeFetch(url, {
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      allowHttpHosts: options.allowHttpHosts,
      allowPrivateHosts: options.allowPrivateHosts,
      headers: { accept: 'text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9', 'user-agent': 'svc-search-ingest' },
      onHead: (head) => {
        if (head.status < 200 || head.status > 299) throw new IngestError(`the server answered HTTP ${head.status}`);
        contentType = headerText(head.headers['content-type']);
        format = formatOfContentType(contentType) ?? (contentType ? null : formatOfPath(head.url.pathname));
        if (!format) throw new IngestError(`unsupported content type ${contentType?.split(';')[0] ?? '(none)'}: only HTML, Markdown and plain text are ingested`);
      },
    });
    return { text: decode(page.body, contentType), format: format! };
  } catch (error) {
    if (error instanceof SafeFetchRefused) throw new IngestError(refusal(error));
    if (error instanceof SafeFetchFailed && error.kind === 'too_large') {
      throw new IngestError(`larger than ${formatBytes(options.maxBytes)}${error.size === null ? '' : ` (${formatBytes(error.size)})`}`);
    }
    if (error instanceof SafeFetchFailed) throw new IngestError(error.message);
    throw error;
  }
}

/** A refusal as the CLI prints it: the rule it broke, and the config key that governs it. */
function refusal(error: SafeFetchRefused): string {
  switch (error.rule) {
    case 'https':
      return `refused (https rule): ${error.message}${error.url.startsWith('http:') ? ' (not in search.ingest.allowHttpHosts)' : ''}`;
    case 'address': {
      const hint = !error.blocked?.exemptable
        ? 'never fetched'
        : error.blocked.hostListed
          ? 'its host is in search.ingest.allowPrivateHosts, but an unlisted host redirected to it'
          : 'allowed only for hosts in search.ingest.allowPrivateHosts';
      return `refused (address rule): ${error.message} (${hint})`;
    }
    case 'redirects':
      return `refused (redirect rule): ${error.message}`;
    case 'url':
      return `refused (URL rule): ${error.message}`;
  }
}

function headerText(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function decode(bytes: Buffer, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

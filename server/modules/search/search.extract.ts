/**
 * Markdown, HTML and plain text → the title, text, URL and date the embedded index stores. Pure
 * functions of the file's text: `svc search ingest` reads files and pages, this decides what they say.
 */
import { parse as parseYaml } from 'yaml';
import { decodeEntities, htmlCanonical, htmlMeta, htmlTitle, htmlToText, inlineText } from './html-text.ts';

export type DocumentFormat = 'markdown' | 'html' | 'text';

export interface ExtractedDocument {
  title: string;
  body: string;
  /** From front matter `url:` or `<link rel="canonical">`; may be relative. */
  url: string | null;
  publishedAt: Date | null;
}

const formats: Record<string, DocumentFormat> = {
  '.md': 'markdown', '.markdown': 'markdown', '.mdx': 'markdown',
  '.html': 'html', '.htm': 'html', '.xhtml': 'html',
  '.txt': 'text', '.text': 'text',
};

/** The format a file name implies, or null for anything we do not ingest. */
export function formatOfPath(path: string): DocumentFormat | null {
  const match = /\.[a-z]+$/i.exec(path);
  return match ? (formats[match[0].toLowerCase()] ?? null) : null;
}

/** The format a Content-Type names, or null. */
export function formatOfContentType(contentType: string | null): DocumentFormat | null {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'text/markdown' || type === 'text/x-markdown') return 'markdown';
  if (type === 'text/plain') return 'text';
  return null;
}

export class ExtractError extends Error {
  override name = 'ExtractError';
}

export function extractDocument(source: string, format: DocumentFormat, fallbackTitle: string): ExtractedDocument {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  switch (format) {
    case 'html':
      return fromHtml(text, fallbackTitle);
    case 'markdown':
    case 'text': {
      const { meta, rest } = frontMatter(text);
      const heading = firstHeading(rest);
      const body = format === 'markdown' ? markdownToText(rest) : tidy(rest);
      return {
        title: stringField(meta, 'title') ?? heading ?? fallbackTitle,
        body,
        url: stringField(meta, 'url'),
        publishedAt: dateField(meta),
      };
    }
  }
}

function fromHtml(html: string, fallbackTitle: string): ExtractedDocument {
  const h1 = /<h1\b[^>]*>([\s\S]*?)<\/h1\s*>/i.exec(html);
  const body = /<body\b[^>]*>([\s\S]*?)(<\/body\s*>|$)/i.exec(html)?.[1] ?? html;
  const published = htmlMeta(html, ['article:published_time', 'datepublished', 'date', 'dc.date', 'dcterms.date', 'publish_date']);
  return {
    title: htmlTitle(html) || (h1 ? inlineText(h1[1]!) : '') || fallbackTitle,
    body: htmlToText(body),
    url: htmlCanonical(html),
    publishedAt: toDate(published),
  };
}

/** YAML between `---` lines at the very top (Jekyll, Hugo, Docusaurus, …). */
function frontMatter(text: string): { meta: Record<string, unknown>; rest: string } {
  const match = /^---[ \t]*\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(text);
  if (!match) return { meta: {}, rest: text };
  let meta: unknown;
  try {
    meta = parseYaml(match[1]!);
  } catch (error) {
    throw new ExtractError(`front matter is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  return { meta: typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {}, rest: text.slice(match[0].length) };
}

function stringField(meta: Record<string, unknown>, key: string): string | null {
  const value = meta[key];
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

function dateField(meta: Record<string, unknown>): Date | null {
  for (const key of ['publishedAt', 'published_at', 'published', 'date']) {
    const date = toDate(meta[key]);
    if (date) return date;
  }
  return null;
}

function toDate(value: unknown): Date | null {
  if (value instanceof Date) return Number.isFinite(value.getTime()) ? value : null;
  if (typeof value !== 'string' || !/\d{4}/.test(value)) return null;
  const text = value.trim();
  // A bare date is a calendar day, not midnight wherever the ingesting machine happens to be.
  const time = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  return Number.isFinite(time) ? new Date(time) : null;
}

/** The first `# Heading` (or `Heading\n===`) outside code fences. */
function firstHeading(markdown: string): string | null {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?(^\1[^\n]*$|(?![\s\S]))/gm, '');
  const atx = /^#[ \t]+(.+?)[ \t]*#*[ \t]*$/m.exec(prose);
  const setext = /^([^\n#>-][^\n]*)\n=+[ \t]*$/m.exec(prose);
  const found = [atx, setext].filter((match) => match !== null).sort((a, b) => a.index - b.index)[0];
  const title = found ? markdownInline(found[1]!) : '';
  return title || null;
}

/** Markdown's words without its syntax: links keep their text, code keeps its content. */
function markdownToText(markdown: string): string {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === null || fence === marker)) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence !== null) {
      lines.push(line);
      continue;
    }
    if (/^\s*\[[^\]]+\]:\s*\S+/.test(line)) continue; // link reference definitions
    if (/^\s*([-*_]\s*){3,}$/.test(line) || /^\s*[=-]+\s*$/.test(line)) continue; // rules, setext underlines
    if (/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line)) continue; // table delimiter rows
    const text = line
      .replace(/^\s{0,3}#{1,6}\s+/, '')
      .replace(/\s+#+\s*$/, '')
      .replace(/^\s*>+\s?/, '')
      .replace(/^\s*([-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?/, '')
      .replace(/\|/g, ' ');
    lines.push(markdownInline(text));
  }
  return tidy(lines.join('\n').replace(/<!--[\s\S]*?-->/g, ''));
}

function markdownInline(text: string): string {
  const plain = text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<(https?:\/\/[^>\s]+)>/g, '$1')
    .replace(/<\/?[a-z][a-z0-9-]*(\s[^<>]*)?\/?>/gi, '')
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '$2')
    .replace(/(^|[\s(])[*_](?=\S)([^*_\n]*?\S)[*_](?=$|[\s).,;:!?])/g, '$1$2')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '$1')
    .replace(/`+([^`]+)`+/g, '$1');
  return decodeEntities(plain).trim();
}

/** Trailing spaces off, at most one blank line in a row, no blank edges. */
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+$/g, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

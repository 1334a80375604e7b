/**
 * Every provider's raw answer becomes `svc.search.v1` here, so the guarantees hold whoever answered:
 * absolute http(s) URLs only (others dropped with a warning), one result per URL, plain-text titles and
 * snippets, ISO dates or null, scores on 0–1, ranks 1..n, at most `maxResults` results.
 */
import { htmlToText, inlineText } from './html-text.ts';
import type { SvcSearchResult, SvcSearchV1 } from './search.output.ts';
import type { RawAnswer, RawResult } from './search.provider.ts';

const maxTitleChars = 300;
const maxSnippetChars = 500;
const maxContentChars = 20_000;
const maxWarnings = 20;

export interface NormaliseContext {
  id: string;
  query: string;
  provider: string;
  maxResults: number;
  latencyMs: number;
}

interface Candidate extends Omit<SvcSearchResult, 'rank' | 'score'> {
  rawScore: number | null;
  /** 1-based position in the provider's answer. */
  position: number;
}

export function normalise(raw: RawAnswer, context: NormaliseContext): SvcSearchV1 {
  const warnings = raw.warnings.map(inlineText).filter(Boolean);
  const seen = new Set<string>();
  const candidates: Candidate[] = [];
  raw.results.forEach((result, index) => {
    const position = index + 1;
    const url = absoluteHttpUrl(result.url);
    if (typeof url === 'string') {
      const title = result.title ? ` ("${clip(inlineText(result.title), 60)}")` : '';
      warnings.push(`Dropped result ${position}${title}: ${url}.`);
      return;
    }
    if (seen.has(url.href)) return;
    seen.add(url.href);
    candidates.push(toCandidate(result, url, position));
  });

  const kept = candidates.slice(0, context.maxResults);
  const scores = scale(kept);
  const results = kept.map(({ rawScore: _rawScore, position: _position, ...result }, index) => ({ rank: index + 1, ...result, score: scores[index]! }));
  const answer = raw.answer ? inlineText(raw.answer) : '';
  return {
    object: 'svc.search.v1',
    id: context.id,
    query: context.query,
    provider: context.provider,
    results,
    ...(answer ? { answer } : {}),
    warnings: warnings.length > maxWarnings ? [...warnings.slice(0, maxWarnings - 1), `… and ${warnings.length - maxWarnings + 1} more warnings.`] : warnings,
    latencyMs: Math.max(0, Math.round(context.latencyMs)),
  };
}

/** A URL's host, lower case, without a leading `www.` (the `domain` of svc.search.v1). */
export function domainOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^www\./, '');
}

/** The URL, or why it is not one a client can open. */
function absoluteHttpUrl(value: string | null | undefined): URL | string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (!text) return 'no URL';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(clip(text, 80))} is not an absolute URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${JSON.stringify(clip(text, 80))} is not an http(s) URL`;
  if (!url.hostname) return `${JSON.stringify(clip(text, 80))} has no host`;
  return url;
}

function toCandidate(result: RawResult, url: URL, position: number): Candidate {
  const domain = domainOf(url);
  const content = result.content ? clip(htmlToText(result.content), maxContentChars) : '';
  const score = typeof result.score === 'number' && Number.isFinite(result.score) && result.score >= 0 ? result.score : null;
  return {
    title: clip(inlineText(result.title ?? ''), maxTitleChars) || clip(`${domain}${url.pathname === '/' ? '' : url.pathname}`, maxTitleChars),
    url: url.href,
    domain,
    snippet: clip(inlineText(result.snippet ?? ''), maxSnippetChars),
    ...(content ? { content } : {}),
    publishedAt: isoDate(result.publishedAt),
    engine: inlineText(result.engine ?? '') || 'unknown',
    rawScore: score,
    position,
  };
}

/**
 * Scores onto 0–1: kept as they are when the provider already scores on 0–1 (Tavily, the embedded
 * index), divided by the best when it does not (SearXNG sums engine weights: 0.3 or 12). A result
 * without a score gets one from its position in the provider's answer (1, 1/2, 1/3, …).
 */
function scale(candidates: Candidate[]): number[] {
  const best = Math.max(0, ...candidates.map((candidate) => candidate.rawScore ?? 0));
  const divisor = best > 1 ? best : 1;
  return candidates.map((candidate) => {
    const score = candidate.rawScore === null ? 1 / candidate.position : candidate.rawScore / divisor;
    return Math.round(Math.min(1, Math.max(0, score)) * 10_000) / 10_000;
  });
}

const dateOnly = /^\d{4}-\d{2}-\d{2}$/;
const localDateTime = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;
const zonedDateTime = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})$/i;

/** ISO 8601 in UTC, or null. A date-time without a zone is read as UTC (SearXNG, Brave `page_age`). */
export function isoDate(value: string | Date | null | undefined): string | null {
  let time: number;
  if (value instanceof Date) time = value.getTime();
  else if (typeof value === 'string') {
    const text = value.trim();
    const local = localDateTime.exec(text);
    const zoned = zonedDateTime.exec(text);
    if (dateOnly.test(text)) time = Date.parse(`${text}T00:00:00Z`);
    else if (local) time = Date.parse(`${local[1]}T${local[2]}Z`);
    else if (zoned) time = Date.parse(`${zoned[1]}T${zoned[2]}${zoned[3]!.length === 5 ? `${zoned[3]!.slice(0, 3)}:${zoned[3]!.slice(3)}` : zoned[3]}`);
    // Other spellings ("Mon, 15 Jan 2024 10:00:00 GMT"); relative ones ("2 days ago") are not dates.
    else time = /\d{4}/.test(text) ? Date.parse(text) : Number.NaN;
  } else return null;
  if (!Number.isFinite(time)) return null;
  // Outside this window a "date" is a parsing accident (or an ISO year the schema's date-time rejects).
  const year = new Date(time).getUTCFullYear();
  if (year < 1900 || time > Date.now() + 2 * 86_400_000) return null;
  return new Date(time).toISOString();
}

/** At most `max` characters, cut at a word boundary when one is near, with an ellipsis. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

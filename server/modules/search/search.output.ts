/**
 * `svc.search.v1`, the one output of hosted search (DESIGN §8.3): what `web_search` returns over MCP and
 * REST and what the `svc-2.1-search` model replies with. The TypeScript type and the JSON Schema below
 * describe the same object; the schema is published at `GET /v1/schemas/svc.search.v1.json`.
 */

export interface SvcSearchResult {
  /** 1..n in the order the provider ranked them. */
  rank: number;
  title: string;
  /** Absolute http(s) URL. */
  url: string;
  /** The URL's host, lower case, without a leading `www.`. */
  domain: string;
  /** Plain text (no HTML), at most a few hundred characters. */
  snippet: string;
  /** A longer plain-text extract of the page, when the provider has one. */
  content?: string;
  /** ISO 8601 (UTC) or null when the provider gave no usable date. */
  publishedAt: string | null;
  /** Relevance within this answer, 0–1 (1 = the provider's best). */
  score: number;
  /** Which engine found it (a SearXNG engine name, `brave`, `tavily`, `embedded`). */
  engine: string;
}

export interface SvcSearchV1 {
  object: 'svc.search.v1';
  id: string;
  query: string;
  provider: string;
  results: SvcSearchResult[];
  /** A direct answer, when the provider has one. */
  answer?: string;
  /** What went wrong without failing the search: engines that did not answer, results dropped. */
  warnings: string[];
  latencyMs: number;
}

export const svcSearchV1Path = '/v1/schemas/svc.search.v1.json';

/**
 * JSON Schema (draft 2020-12) of `SvcSearchV1`. Written without `$defs` and 2020-only keywords so that
 * clients whose validators default to draft-07 (MCP SDKs checking `outputSchema`) read it the same way, and
 * with one `type` per schema (a nullable field is `anyOf` a type and `null`): clients that turn tool schemas
 * into their own strict subset warn on, or drop, `type: [..., "null"]`.
 */
export const svcSearchV1Schema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'svc.search.v1',
  description: 'Hosted web search output of svc: ranked results with plain-text snippets, normalised across providers.',
  type: 'object',
  additionalProperties: false,
  required: ['object', 'id', 'query', 'provider', 'results', 'warnings', 'latencyMs'],
  properties: {
    object: { const: 'svc.search.v1', description: 'The form name and version.' },
    id: { type: 'string', pattern: '^srch_[A-Za-z0-9_-]+$', description: 'Identifier of this search.' },
    query: { type: 'string', minLength: 1, maxLength: 400, description: 'The query as searched (whitespace collapsed).' },
    provider: { type: 'string', minLength: 1, description: 'The configured provider: embedded, searxng, brave or tavily.' },
    results: {
      type: 'array',
      maxItems: 50,
      description: 'Results in rank order; may be empty.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['rank', 'title', 'url', 'domain', 'snippet', 'publishedAt', 'score', 'engine'],
        properties: {
          rank: { type: 'integer', minimum: 1, description: '1-based position.' },
          title: { type: 'string', minLength: 1 },
          url: { type: 'string', format: 'uri', pattern: '^https?://', description: 'Absolute http(s) URL.' },
          domain: { type: 'string', minLength: 1, description: 'Host of the URL without a leading www.' },
          snippet: { type: 'string', description: 'Plain-text excerpt (no HTML).' },
          content: { type: 'string', description: 'Longer plain-text extract, when the provider has one.' },
          publishedAt: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }], description: 'ISO 8601 publication date, or null.' },
          score: { type: 'number', minimum: 0, maximum: 1, description: 'Relevance within this answer, 0–1.' },
          engine: { type: 'string', minLength: 1, description: 'The engine that found the result.' },
        },
      },
    },
    answer: { type: 'string', minLength: 1, description: 'A direct answer, when the provider has one.' },
    warnings: { type: 'array', items: { type: 'string' }, description: 'Partial failures that did not fail the search.' },
    latencyMs: { type: 'integer', minimum: 0, description: 'Time svc spent answering, in milliseconds.' },
  },
} as const;

/** The schema as published: `$id` is where this server serves it. */
export function svcSearchV1SchemaAt(baseUrl: string) {
  return { $id: `${baseUrl}${svcSearchV1Path}`, ...svcSearchV1Schema };
}

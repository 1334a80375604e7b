/**
 * The search executor's pure parts: an answer larger than its reserved output budget sheds page extracts,
 * then its lowest-ranked results (with warnings) so billing never exceeds the reservation; `url_citation`
 * positions point at each result's URL inside the JSON text.
 */
import { describe, expect, it } from 'vitest';
import { fitToBudget, urlCitations } from '../../../server/modules/search/search.executor.ts';
import type { SvcSearchV1 } from '../../../server/modules/search/search.output.ts';

function answer(results: number, content = ''): SvcSearchV1 {
  return {
    object: 'svc.search.v1',
    id: 'srch_test',
    query: 'q',
    provider: 'searxng',
    results: Array.from({ length: results }, (_, index) => ({
      rank: index + 1,
      title: `Result "${index + 1}"`,
      url: `https://example.org/${index + 1}?a=1&b="x"`,
      domain: 'example.org',
      snippet: 'snippet '.repeat(20),
      ...(content ? { content } : {}),
      publishedAt: null,
      score: 1 / (index + 1),
      engine: 'test',
    })),
    warnings: [],
    latencyMs: 1,
  };
}

/** A stand-in tokenizer: one token per 4 characters. */
const count = (text: string) => Math.ceil(text.length / 4);
const counting = async (text: string) => count(text);

describe('fitToBudget', () => {
  it('leaves an answer within budget as it is', async () => {
    const result = answer(3, 'extract');
    expect(await fitToBudget(result, 10_000, counting)).toBe(JSON.stringify(answer(3, 'extract')));
  });

  it('drops page extracts first, with a warning', async () => {
    const result = answer(3, 'long extract '.repeat(2000));
    const json = await fitToBudget(result, 1000, counting);
    expect(count(json)).toBeLessThanOrEqual(1000);
    expect(result.results).toHaveLength(3);
    expect(result.results.every((item) => item.content === undefined)).toBe(true);
    expect(result.warnings).toEqual(['Page extracts were left out to keep this answer within 1000 tokens.']);
    expect(JSON.parse(json)).toEqual(result);
  });

  it('then drops results from the lowest rank, saying how many', async () => {
    const result = answer(10);
    const json = await fitToBudget(result, 300, counting);
    expect(count(json)).toBeLessThanOrEqual(300);
    expect(result.results.length).toBeGreaterThan(0);
    expect(result.results.length).toBeLessThan(10);
    expect(result.results.map((item) => item.rank)).toEqual(result.results.map((_, index) => index + 1));
    expect(result.warnings.at(-1)).toMatch(/^\d+ lower-ranked results were left out to keep this answer within 300 tokens\.$/);
    expect(JSON.parse(json)).toEqual(result);
  });
});

describe('urlCitations', () => {
  it('points start_index..end_index at each URL inside the JSON text, escapes included', () => {
    const result = answer(3);
    const json = JSON.stringify(result);
    const citations = urlCitations(json, result);
    expect(citations).toHaveLength(3);
    for (const [index, citation] of citations.entries()) {
      expect(citation.type).toBe('url_citation');
      expect(citation.url_citation.title).toBe(result.results[index]!.title);
      expect(json.slice(citation.url_citation.start_index, citation.url_citation.end_index)).toBe(JSON.stringify(result.results[index]!.url).slice(1, -1));
    }
  });
});

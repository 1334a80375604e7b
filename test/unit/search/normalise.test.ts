import { describe, expect, it } from 'vitest';
import { inlineText, htmlToText } from '../../../server/modules/search/html-text.ts';
import { isoDate, normalise } from '../../../server/modules/search/search.normalise.ts';
import type { RawResult } from '../../../server/modules/search/search.provider.ts';
import { assertSvcSearchV1 } from '../../helpers/search-schema.ts';

const context = { id: 'srch_test', query: 'q', provider: 'searxng', maxResults: 10, latencyMs: 12.4 };

function run(results: RawResult[], extra: Partial<typeof context> = {}, answer?: string) {
  const output = normalise({ results, warnings: [], answer }, { ...context, ...extra });
  assertSvcSearchV1(output);
  return output;
}

describe('normalise', () => {
  it('keeps only absolute http(s) URLs, each once, and says which results it dropped', () => {
    const output = run([
      { url: 'https://a.example/x', title: 'A', engine: 'e' },
      { url: '/relative', title: 'Rel', engine: 'e' },
      { url: 'javascript:alert(1)', title: 'JS', engine: 'e' },
      { url: 'mailto:x@example.com', title: 'Mail', engine: 'e' },
      { url: null, title: 'None', engine: 'e' },
      { url: '  http://B.Example:8080/y?z=1#frag ', title: 'B', engine: 'e' },
      { url: 'https://a.example/x', title: 'A twice', engine: 'e' },
    ]);
    expect(output.results.map((result) => [result.rank, result.url, result.domain])).toEqual([
      [1, 'https://a.example/x', 'a.example'],
      [2, 'http://b.example:8080/y?z=1#frag', 'b.example'],
    ]);
    expect(output.warnings).toEqual([
      'Dropped result 2 ("Rel"): "/relative" is not an absolute URL.',
      'Dropped result 3 ("JS"): "javascript:alert(1)" is not an http(s) URL.',
      'Dropped result 4 ("Mail"): "mailto:x@example.com" is not an http(s) URL.',
      'Dropped result 5 ("None"): no URL.',
    ]);
    expect(output.latencyMs).toBe(12);
  });

  it('scales scores above 1 by the best, keeps 0–1 scores, and derives missing ones from position', () => {
    expect(run([{ url: 'https://a.example/1', score: 12.5 }, { url: 'https://a.example/2', score: 3.125 }, { url: 'https://a.example/3', score: 0.5 }]).results.map((r) => r.score)).toEqual([1, 0.25, 0.04]);
    expect(run([{ url: 'https://a.example/1', score: 0.91 }, { url: 'https://a.example/2', score: 0.42 }]).results.map((r) => r.score)).toEqual([0.91, 0.42]);
    expect(run([{ url: 'https://a.example/1' }, { url: 'https://a.example/2' }, { url: 'https://a.example/3', score: Number.NaN }]).results.map((r) => r.score)).toEqual([1, 0.5, 0.3333]);
    expect(run([{ url: 'https://a.example/1', score: -4 }]).results[0]!.score).toBe(1);
  });

  it('applies maxResults after dropping, and ranks 1..n', () => {
    const results = Array.from({ length: 8 }, (_, i) => ({ url: i % 2 ? `https://a.example/${i}` : 'ftp://nope', title: `T${i}` }));
    const output = run(results, { maxResults: 3 });
    expect(output.results.map((result) => [result.rank, result.title])).toEqual([[1, 'T1'], [2, 'T3'], [3, 'T5']]);
  });

  it('cleans titles, snippets and content of HTML, and fills an empty title and engine', () => {
    const output = run(
      [
        {
          url: 'https://www.example.org/path/page',
          title: 'Alpha <b>bold</b> &amp; co',
          snippet: 'About <span class="highlight">the query</span>\n  on   two lines &#8212; &unknown; <script>x()</script>',
          content: '<p>First para</p><p>Second &lt;para&gt;</p><style>p{}</style>',
          engine: 'google',
        },
        { url: 'https://example.com/path', title: '   ', snippet: null, engine: '' },
      ],
      {},
      '  The <i>answer</i>  ',
    );
    expect(output.results[0]).toMatchObject({
      title: 'Alpha bold & co',
      domain: 'example.org',
      snippet: 'About the query on two lines — &unknown;',
      content: 'First para\nSecond <para>',
      engine: 'google',
    });
    expect(output.results[1]).toMatchObject({ title: 'example.com/path', snippet: '', engine: 'unknown' });
    expect(output.results[1]).not.toHaveProperty('content');
    expect(output.answer).toBe('The answer');
  });

  it('clips long snippets at a word boundary', () => {
    const snippet = run([{ url: 'https://a.example/', snippet: 'word '.repeat(300) }]).results[0]!.snippet;
    expect(snippet.length).toBeLessThanOrEqual(500);
    expect(snippet.endsWith('word…')).toBe(true);
  });

  it('writes every date as ISO 8601 UTC or null', () => {
    expect(isoDate('2024-01-15T08:30:00')).toBe('2024-01-15T08:30:00.000Z');
    expect(isoDate('2024-01-15 08:30:00')).toBe('2024-01-15T08:30:00.000Z');
    expect(isoDate('2023-12-01T00:00:00+01:00')).toBe('2023-11-30T23:00:00.000Z');
    expect(isoDate('2023-12-01T00:00:00+0100')).toBe('2023-11-30T23:00:00.000Z');
    expect(isoDate('2024-03-01')).toBe('2024-03-01T00:00:00.000Z');
    expect(isoDate('Mon, 15 Jan 2024 10:00:00 GMT')).toBe('2024-01-15T10:00:00.000Z');
    expect(isoDate(new Date('2020-05-05T05:05:05Z'))).toBe('2020-05-05T05:05:05.000Z');
    for (const bad of ['not a date', '2 days ago', '', '0001-01-01', '9999-01-01T00:00:00Z', null, undefined, new Date(Number.NaN)]) {
      expect(isoDate(bad as string | null)).toBeNull();
    }
  });

  it('keeps warnings bounded', () => {
    const output = run(Array.from({ length: 40 }, () => ({ url: 'nope' })));
    expect(output.results).toEqual([]);
    expect(output.warnings).toHaveLength(20);
    expect(output.warnings.at(-1)).toBe('… and 21 more warnings.');
  });
});

describe('html-text', () => {
  it('drops scripts, styles, comments and the head; keeps paragraphs as lines', () => {
    const html = '<html><head><title>T</title><style>a{}</style></head><body><!-- c --><h1>Head</h1><p>One&nbsp;two</p><script>if (a < b) {}</script><div>Three<br>Four</div></body></html>';
    expect(htmlToText(html)).toBe('Head\nOne two\nThree\nFour');
    expect(inlineText('a < b and <em>c</em>')).toBe('a < b and c');
  });
});

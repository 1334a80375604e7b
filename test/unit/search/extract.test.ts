import { describe, expect, it } from 'vitest';
import { ExtractError, extractDocument, formatOfContentType, formatOfPath } from '../../../server/modules/search/search.extract.ts';

describe('extractDocument', () => {
  it('Markdown: front matter url/date, the first # heading as title, syntax stripped, code kept', () => {
    const markdown = [
      '---',
      'url: https://docs.example.com/intro',
      'date: 2024-03-01',
      '---',
      '```bash',
      '# a shell comment, not the title',
      'npm start',
      '```',
      '',
      '# Getting started with **svc** #',
      '',
      'Install with `npm ci`, then read [the guide](https://example.com/guide) and ![a diagram](d.png).',
      '',
      '> quoted *words* here',
      '',
      '- [x] done item',
      '1. first step',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
      '',
      '[ref]: https://example.com/ref',
      '<!-- hidden note -->',
      'snake_case_name stays.',
    ].join('\r\n');
    const document = extractDocument(markdown, 'markdown', 'intro');
    expect(document.title).toBe('Getting started with svc');
    expect(document.url).toBe('https://docs.example.com/intro');
    expect(document.publishedAt?.toISOString()).toBe('2024-03-01T00:00:00.000Z');
    expect(document.body).toBe(
      [
        '# a shell comment, not the title',
        'npm start',
        '',
        'Getting started with svc',
        '',
        'Install with npm ci, then read the guide and a diagram.',
        '',
        'quoted words here',
        '',
        'done item',
        'first step',
        '',
        'a   b',
        '1   2',
        '',
        'snake_case_name stays.',
      ].join('\n'),
    );
  });

  it('Markdown: a setext heading, or the file name when there is no heading', () => {
    expect(extractDocument('Intro text\n\nTitle Here\n==========\n\nBody', 'markdown', 'file').title).toBe('Title Here');
    expect(extractDocument('Just text.', 'markdown', 'my-notes').title).toBe('my-notes');
    expect(extractDocument('---\ntitle: From front matter\n---\n# Heading\n', 'markdown', 'x').title).toBe('From front matter');
  });

  it('Markdown: broken front matter is an error that says so', () => {
    expect(() => extractDocument('---\nurl: [unclosed\n---\n# T\n', 'markdown', 'x')).toThrow(ExtractError);
    expect(() => extractDocument('---\nurl: [unclosed\n---\n# T\n', 'markdown', 'x')).toThrow(/front matter is not valid YAML/);
  });

  it('HTML: <title>, canonical URL, published date; scripts and styles removed', () => {
    const html = `<!doctype html><html><head><title>Pricing &amp; plans</title>
      <link rel="canonical" href="https://example.com/pricing">
      <meta property="article:published_time" content="2024-05-02T10:00:00+02:00">
      <style>body { color: red }</style><script>var s = "<p>hidden</p>";</script></head>
      <body><h1>Pricing</h1><p>Pro costs $9.</p><script>alert(1)</script><noscript>enable js</noscript></body></html>`;
    const document = extractDocument(html, 'html', 'page');
    expect(document).toEqual({ title: 'Pricing & plans', url: 'https://example.com/pricing', publishedAt: new Date('2024-05-02T08:00:00Z'), body: 'Pricing\nPro costs $9.' });
    expect(extractDocument('<body><h1>Only <em>h1</em></h1><p>x</p></body>', 'html', 'page').title).toBe('Only h1');
    expect(extractDocument('<p>no titles</p>', 'html', 'page').title).toBe('page');
  });

  it('plain text: kept as written, title from the file name', () => {
    const document = extractDocument('\uFEFFLine one   \r\n\r\n\r\n\r\nLine two\n', 'text', 'notes');
    expect(document).toEqual({ title: 'notes', body: 'Line one\n\nLine two', url: null, publishedAt: null });
  });

  it('formats from file names and content types', () => {
    expect(['a.md', 'b.MARKDOWN', 'c.html', 'd.htm', 'e.txt', 'f.pdf', 'g'].map(formatOfPath)).toEqual(['markdown', 'markdown', 'html', 'html', 'text', null, null]);
    expect(['text/html; charset=utf-8', 'text/markdown', 'text/plain', 'application/pdf', null].map(formatOfContentType)).toEqual(['html', 'markdown', 'text', null, null]);
  });
});

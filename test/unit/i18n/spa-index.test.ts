/** The page the server sends before the app runs is already in the reader's language: `<html lang>` and the text. */
import { describe, expect, it } from 'vitest';
import { localizedIndex } from '../../../server/http/spa.ts';

const built = `<!doctype html>
<html lang="en">
  <head>
    <meta name="description" content="svc: a self-hostable gateway." />
    <title>svc</title>
  </head>
  <body>
    <div id="root"></div>
    <noscript>svc's web app needs JavaScript.</noscript>
  </body>
</html>`;

describe('localizedIndex', () => {
  it('sets lang, the description and the noscript text per language, and nothing else', () => {
    const pages = localizedIndex(built);
    expect(pages.en).toContain('<html lang="en">');
    expect(pages['zh-CN']).toContain('<html lang="zh-CN">');
    expect(pages['zh-CN']).toMatch(/<meta name="description" content="svc：可自行部署[^"]*" \/>/);
    expect(pages['zh-CN']).toMatch(/<noscript>svc 网页版需要启用 JavaScript。[^<]*<\/noscript>/);
    expect(pages.en).toContain("<noscript>svc's web app needs JavaScript.");
    const strip = (html: string) => html.replace(/<html lang="[^"]*"/, '').replace(/content="[^"]*"/, '').replace(/<noscript>[^<]*<\/noscript>/, '');
    expect(strip(pages['zh-CN'])).toBe(strip(built));
  });
});

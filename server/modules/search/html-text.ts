/**
 * HTML to plain text, for ingested pages and for provider snippets (SearXNG and Brave mark matches with
 * `<span>`/`<strong>`). Regular expressions, not a DOM: we only need the words, in order, without the
 * markup, scripts and styles — never a faithful rendering.
 */

const namedEntities: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ensp: ' ', emsp: ' ', thinsp: ' ',
  hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', sbquo: '‚', ldquo: '“', rdquo: '”', bdquo: '„',
  laquo: '«', raquo: '»', lsaquo: '‹', rsaquo: '›', middot: '·', bull: '•', copy: '©', reg: '®', trade: '™',
  deg: '°', plusmn: '±', times: '×', divide: '÷', para: '¶', sect: '§', euro: '€', pound: '£', yen: '¥', cent: '¢',
  shy: '', zwj: '', zwnj: '', iexcl: '¡', iquest: '¿',
  auml: 'ä', ouml: 'ö', uuml: 'ü', Auml: 'Ä', Ouml: 'Ö', Uuml: 'Ü', szlig: 'ß',
  eacute: 'é', egrave: 'è', ecirc: 'ê', aacute: 'á', agrave: 'à', acirc: 'â', iacute: 'í', oacute: 'ó',
  uacute: 'ú', ntilde: 'ñ', ccedil: 'ç', Eacute: 'É', aring: 'å', oslash: 'ø', aelig: 'æ',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z][a-z0-9]{1,31});/gi, (match, entity: string) => {
    if (entity[0] === '#') {
      const code = entity[1] === 'x' || entity[1] === 'X' ? Number.parseInt(entity.slice(2), 16) : Number.parseInt(entity.slice(1), 10);
      // Control characters and surrogates are not text; an invalid reference decodes to nothing.
      if (!Number.isFinite(code) || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) || code < 0x20) return code === 9 || code === 10 ? ' ' : '';
      return String.fromCodePoint(code);
    }
    return namedEntities[entity] ?? match;
  });
}

// Elements whose content is never text a reader sees.
const invisible = /<(script|style|noscript|template|svg|math|iframe|object|head)\b[^>]*>[\s\S]*?(<\/\1\s*>|$)/gi;
const blockTag = /<\/?(p|div|section|article|header|footer|nav|aside|main|h[1-6]|li|ul|ol|dl|dt|dd|table|thead|tbody|tr|td|th|blockquote|pre|figure|figcaption|form|fieldset|hr|br|address|details|summary)\b[^>]*>/gi;
const anyTag = /<\/?[a-z][^>]*>|<![^>]*>|<\?[^>]*>/gi;

/** The text of an HTML document or fragment: one paragraph per line, whitespace collapsed. */
export function htmlToText(html: string): string {
  const text = html
    .replace(/<!--[\s\S]*?(-->|$)/g, ' ')
    .replace(invisible, ' ')
    .replace(blockTag, '\n')
    .replace(anyTag, '');
  return decodeEntities(text)
    .split('\n')
    .map((line) => line.replace(/[\s\u00a0]+/g, ' ').trim())
    .filter((line) => line !== '')
    .join('\n');
}

/** One line of text from a fragment that may hold tags and entities (snippets, titles). */
export function inlineText(fragment: string): string {
  return decodeEntities(fragment.replace(/<!--[\s\S]*?(-->|$)/g, ' ').replace(invisible, ' ').replace(anyTag, ' '))
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
}

/** `<title>` of a document, as text; null when absent or empty. */
export function htmlTitle(html: string): string | null {
  const match = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = match ? inlineText(match[1]!) : '';
  return title || null;
}

/** `content` of the first `<meta>` whose name or property is one of `names`. */
export function htmlMeta(html: string, names: readonly string[]): string | null {
  for (const tag of html.match(/<meta\b[^>]*>/gi) ?? []) {
    const key = attribute(tag, 'property') ?? attribute(tag, 'name') ?? attribute(tag, 'itemprop');
    if (key && names.includes(key.toLowerCase())) {
      const content = attribute(tag, 'content');
      if (content) return content;
    }
  }
  return null;
}

/** `href` of `<link rel="canonical">`, if any. */
export function htmlCanonical(html: string): string | null {
  for (const tag of html.match(/<link\b[^>]*>/gi) ?? []) {
    if (attribute(tag, 'rel')?.toLowerCase().split(/\s+/).includes('canonical')) return attribute(tag, 'href');
  }
  return null;
}

function attribute(tag: string, name: string): string | null {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  if (!match) return null;
  return decodeEntities(match[1] ?? match[2] ?? match[3] ?? '').trim();
}

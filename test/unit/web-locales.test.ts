/**
 * The web app's message catalogues (`web/src/locales/<language>/<namespace>.json`) are complete in every
 * language: the same namespaces, the same keys (plural keys in the CLDR categories each language uses),
 * the same `{{placeholders}}` and `<tags>` for `<Trans>`, and Chinese that is Chinese. A key missing in
 * either language fails here. The English text of the built-in catalogue (plan and model descriptions)
 * must match what the server sends, or the translation would silently stop being shown.
 */
import { globSync, readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultModels, defaultPlans } from '../../server/config/catalogue.ts';
import { tierLabels } from '../../server/modules/model/model.service.ts';

const localesDir = resolve(import.meta.dirname, '../../web/src/locales');
const languages = ['en', 'zh-CN'] as const;
type Language = (typeof languages)[number];

/** Strings identical in both languages on purpose even though they hold English words (none so far). */
const sameInBothLanguages = new Set<string>([]);

const pluralSuffix = /_(zero|one|two|few|many|other)$/;
const han = /\p{Script=Han}/u;

function catalogue(language: string, namespace: string): Record<string, unknown> {
  return JSON.parse(readFileSync(resolve(localesDir, language, `${namespace}.json`), 'utf8')) as Record<string, unknown>;
}

/** Leaf strings by path; object keys are kept whole (model ids contain dots), joined with "." for reports. */
function leaves(node: unknown, path: string[] = [], into = new Map<string, string>()): Map<string, string> {
  if (typeof node === 'string') into.set(path.join('.'), node);
  else if (node && typeof node === 'object' && !Array.isArray(node)) for (const [key, value] of Object.entries(node)) leaves(value, [...path, key], into);
  else into.set(path.join('.'), `<not a string: ${JSON.stringify(node)}>`);
  return into;
}

const placeholders = (text: string) => [...new Set(Array.from(text.matchAll(/\{\{\s*([^,}\s]+)[^}]*\}\}/g), (m) => m[1]!))].sort();
const tags = (text: string) => [...new Set(Array.from(text.matchAll(/<\/?([A-Za-z][\w-]*)\s*\/?>/g), (m) => m[1]!))].sort();

interface Entry {
  /** The key without a plural suffix. */
  base: string;
  forms: Map<string, string>;
}

function entries(language: Language, namespace: string): Map<string, Entry> {
  const grouped = new Map<string, Entry>();
  for (const [key, text] of leaves(catalogue(language, namespace))) {
    const category = pluralSuffix.exec(key)?.[1] ?? '';
    const base = key.replace(pluralSuffix, '');
    const entry = grouped.get(base) ?? { base, forms: new Map() };
    entry.forms.set(category, text);
    grouped.set(base, entry);
  }
  return grouped;
}

const namespacesOf = (language: string) => globSync('*.json', { cwd: resolve(localesDir, language) }).map((file) => basename(file, '.json')).sort();
const namespaces = namespacesOf('en');

describe('web message catalogues', () => {
  it('have the same namespaces in every language', () => {
    expect(namespaces.length).toBeGreaterThan(0);
    for (const language of languages) expect(namespacesOf(language), language).toEqual(namespaces);
    const stray = globSync('*/*.json', { cwd: localesDir }).map((file) => dirname(file)).filter((dir) => !(languages as readonly string[]).includes(dir));
    expect(stray, 'a language directory the test does not know').toEqual([]);
  });

  describe.each(namespaces)('%s', (namespace) => {
    const byLanguage = Object.fromEntries(languages.map((language) => [language, entries(language, namespace)])) as Record<Language, Map<string, Entry>>;

    it('has every key in both languages', () => {
      for (const language of languages) {
        const other = language === 'en' ? 'zh-CN' : 'en';
        const missing = [...byLanguage[other].keys()].filter((base) => !byLanguage[language].has(base));
        expect(missing, `keys of ${namespace}.json missing in ${language}`).toEqual([]);
      }
    });

    it('writes plurals in the categories each language has', () => {
      for (const language of languages) {
        const categories = [...new Intl.PluralRules(language).resolvedOptions().pluralCategories].sort();
        for (const [base, entry] of byLanguage[language]) {
          const plural = languages.some((any) => [...(byLanguage[any].get(base)?.forms.keys() ?? [])].some((form) => form !== ''));
          const forms = [...entry.forms.keys()].sort();
          if (plural) expect(forms, `${language} ${namespace}:${base} needs _${categories.join(', _')}`).toEqual(categories);
          else expect(forms, `${language} ${namespace}:${base}`).toEqual(['']);
        }
      }
    });

    it('uses the same placeholders and <Trans> tags in both languages', () => {
      for (const [base, english] of byLanguage.en) {
        const chinese = byLanguage['zh-CN'].get(base);
        if (!chinese) continue;
        const union = (entry: Entry, pick: (text: string) => string[]) => [...new Set([...entry.forms.values()].flatMap(pick))].sort();
        // An English singular may spell its number out ("one request"); compare across all forms.
        expect(union(chinese, placeholders), `${namespace}:${base} placeholders`).toEqual(union(english, placeholders));
        expect(union(chinese, tags), `${namespace}:${base} tags`).toEqual(union(english, tags));
      }
    });

    it('has Chinese that is Chinese and no empty text', () => {
      for (const [base, chinese] of byLanguage['zh-CN']) {
        for (const [form, text] of chinese.forms) {
          const english = byLanguage.en.get(base)?.forms.get(form) ?? byLanguage.en.get(base)?.forms.get('other');
          expect(text.trim(), `${namespace}:${base}`).not.toBe('');
          expect(text, `${namespace}:${base}`).not.toMatch(/^<not a string/);
          if (han.test(text)) continue;
          // Without Han characters: only symbols and placeholders ("/ {{limit}}"), or the English text
          // unchanged (a product name, a command) holding no English phrase.
          if (!/[A-Za-z]/.test(text.replace(/\{\{[^}]*\}\}|<[^>]*>/g, ''))) continue;
          expect(text, `${namespace}:${base} looks untranslated`).toBe(english);
          if (!sameInBothLanguages.has(`${namespace}:${base}`)) expect(text, `${namespace}:${base} looks untranslated`).not.toMatch(/[A-Za-z]{3,}\s+[A-Za-z]{3,}/);
        }
      }
    });
  });

  it('translate the built-in catalogue from the English the server actually sends', () => {
    const plan = catalogue('en', 'plan') as { catalogue: { plans: Record<string, { name: string; description: string }>; packages: Record<string, { name: string }> } };
    for (const [id, defaults] of Object.entries(defaultPlans)) {
      expect(plan.catalogue.plans[id], `plan ${id}`).toEqual({ name: defaults.name, description: defaults.description });
      for (const pkg of defaults.packages) expect(plan.catalogue.packages[pkg.id], `package ${pkg.id}`).toEqual({ name: pkg.name });
    }
    const model = catalogue('en', 'model') as { catalogue: { intendedUse: Record<string, string>; tier: Record<string, string> } };
    expect(model.catalogue.intendedUse).toEqual(Object.fromEntries(Object.entries(defaultModels).map(([id, defaults]) => [id, defaults.intendedUse])));
    expect(model.catalogue.tier).toEqual(tierLabels);
  });
});

/**
 * The audit log speaks words, not codes (issue 49 item 8): every action the server records and every field
 * its before/after may hold (server/modules/audit/audit.vocabulary.ts, which types the writers) has a name
 * in the admin app — in English and in Chinese. A new action or field fails here until it has both.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditActions as serverActions, auditFields as serverFields } from '../../server/modules/audit/audit.vocabulary.ts';
import { auditActions as webActions, auditFields as webFields } from '../../web/src/modules/staff/components/labels.ts';

const localesDir = resolve(import.meta.dirname, '../../web/src/locales');

function staffCatalogue(language: string): Record<string, unknown> {
  return JSON.parse(readFileSync(resolve(localesDir, language, 'staff.json'), 'utf8')) as Record<string, unknown>;
}

function lookup(catalogue: Record<string, unknown>, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), catalogue);
}

describe('audit log words', () => {
  it('the admin app knows every action and every field the server records, and no others', () => {
    expect(Object.keys(webActions).sort()).toEqual([...serverActions].sort());
    expect([...webFields].sort()).toEqual([...serverFields].sort());
  });

  it.each(['en', 'zh-CN'])('every action and field has words in %s', (language) => {
    const catalogue = staffCatalogue(language);
    const missing: string[] = [];
    for (const action of serverActions) {
      const key = webActions[action];
      if (typeof lookup(catalogue, key) !== 'string') missing.push(`${action} → ${key}`);
    }
    for (const field of serverFields) if (typeof lookup(catalogue, `audit.field.${field}`) !== 'string') missing.push(`field ${field}`);
    expect(missing).toEqual([]);
  });

  it('no field is named by its code', () => {
    const english = staffCatalogue('en');
    for (const field of serverFields) expect(lookup(english, `audit.field.${field}`), field).not.toBe(field);
  });
});

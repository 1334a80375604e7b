/**
 * svc.search.v1's JSON Schema is one every MCP client accepts as a tool's outputSchema: one `type` per
 * schema (a nullable field is `anyOf` a type and `null`, never `type: [x, "null"]`, which clients that map
 * schemas to their own strict subset warn on or drop), no `$ref`/`$defs`, and it still says what it did:
 * `publishedAt` is an ISO date-time or null, and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { svcSearchV1Schema } from '../../../server/modules/search/search.output.ts';
import { ajv } from '../../helpers/search-schema.ts';

/** Every sub-schema of `schema`, with its path. */
function* walk(schema: unknown, path = '#'): Generator<[string, Record<string, unknown>]> {
  if (typeof schema !== 'object' || schema === null) return;
  const node = schema as Record<string, unknown>;
  yield [path, node];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties') for (const [name, child] of Object.entries(value as object)) yield* walk(child, `${path}/properties/${name}`);
    else if (key === 'items') yield* walk(value, `${path}/items`);
    else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') for (const [i, child] of (value as unknown[]).entries()) yield* walk(child, `${path}/${key}/${i}`);
  }
}

describe('svc.search.v1 JSON Schema', () => {
  it('has one type per schema: no type arrays, no $ref or $defs', () => {
    const unions = [...walk(svcSearchV1Schema)].filter(([, node]) => Array.isArray(node.type)).map(([path]) => path);
    expect(unions).toEqual([]);
    expect(JSON.stringify(svcSearchV1Schema)).not.toMatch(/"\$ref"|"\$defs"|"definitions"/);
  });

  it('still allows publishedAt to be an ISO date-time or null, and nothing else', () => {
    const itemSchema = { ...svcSearchV1Schema.properties.results.items, $schema: svcSearchV1Schema.$schema };
    const validate = ajv.compile(itemSchema);
    const item = { rank: 1, title: 't', url: 'https://example.org/', domain: 'example.org', snippet: '', publishedAt: null, score: 1, engine: 'e' };
    expect(validate(item)).toBe(true);
    expect(validate({ ...item, publishedAt: '2024-01-15T08:30:00.000Z' })).toBe(true);
    for (const bad of ['yesterday', 42, false, {}]) expect(validate({ ...item, publishedAt: bad }), JSON.stringify(bad)).toBe(false);
    expect(validate({ ...item, publishedAt: undefined })).toBe(false);
  });
});

/**
 * Prints the Pothos schema to `schema.graphql`. With `--check`, exits 1 if the committed file differs
 * (CI runs this so the file never drifts from the code).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './schema.ts';

const target = resolve(import.meta.dirname, '../../schema.graphql');
const printed = `${printSchema(lexicographicSortSchema(schema))}\n`;

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // Missing counts as drift.
  }
  if (committed !== printed) {
    process.stderr.write('schema.graphql is out of date: run `npm run schema:print` and commit the result.\n');
    process.exit(1);
  }
  process.stdout.write('schema.graphql is up to date.\n');
} else {
  writeFileSync(target, printed);
  process.stdout.write(`wrote ${target}\n`);
}

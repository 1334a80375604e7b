/**
 * Every GraphQL document the web app sends (exported from `web/src/**\/graphql/*.ts`) must validate
 * against the printed `schema.graphql`, and stay within the server's document limits (cost, depth,
 * tokens, aliases: `server/graphql/limits.ts`) as Apollo Client sends it, `__typename` included — so a
 * server change that breaks a page fails here, not in a browser.
 */
import { globSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { addTypenameToDocument } from '@apollo/client/utilities';
import { buildSchema, Kind, NoUnusedFragmentsRule, parse, print, specifiedRules, validate, type DocumentNode } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useDocumentLimits } from '../../server/graphql/limits.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const schema = buildSchema(readFileSync(resolve(repoRoot, 'schema.graphql'), 'utf8'));
const files = globSync('web/src/**/graphql/*.ts', { cwd: repoRoot }).sort();

interface ExportedDocument {
  file: string;
  name: string;
  document: DocumentNode;
}

async function exportedDocuments(): Promise<ExportedDocument[]> {
  const found: ExportedDocument[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(resolve(repoRoot, file)).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (isDocument(value)) found.push({ file, name, document: value });
    }
  }
  return found;
}

function isDocument(value: unknown): value is DocumentNode {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === Kind.DOCUMENT;
}

/** A fragment file on its own defines fragments no operation uses; everything else applies. */
function errorsOf(document: DocumentNode): string[] {
  const hasOperation = document.definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  const rules = hasOperation ? specifiedRules : specifiedRules.filter((rule) => rule !== NoUnusedFragmentsRule);
  return validate(schema, document, rules).map((error) => error.message);
}

describe('web GraphQL operations', () => {
  it('finds the documents to check', async () => {
    expect(files.length).toBeGreaterThan(0);
    const documents = await exportedDocuments();
    // Every file under graphql/ exports at least one document; a file that exports none is misplaced.
    for (const file of files) expect(documents.some((doc) => doc.file === file), `${file} exports no GraphQL document`).toBe(true);
  });

  it('validate against schema.graphql', async () => {
    const failures = (await exportedDocuments())
      .map(({ file, name, document }) => ({ where: `${relative(repoRoot, resolve(repoRoot, file))} ${name}`, errors: errorsOf(document) }))
      .filter((result) => result.errors.length > 0);
    expect(failures).toEqual([]);
  });

  it('follow the naming rules: named operations, one per file, fragments named …Fragment', async () => {
    const problems: string[] = [];
    const operationsPerFile = new Map<string, number>();
    for (const { file, name, document } of await exportedDocuments()) {
      const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
      operationsPerFile.set(file, (operationsPerFile.get(file) ?? 0) + operations.length);
      for (const operation of operations) if (!operation.name) problems.push(`${file} ${name}: anonymous ${operation.operation}`);
      for (const definition of document.definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION && !definition.name.value.endsWith('Fragment')) {
          problems.push(`${file} ${name}: fragment ${definition.name.value} should end in "Fragment"`);
        }
      }
    }
    for (const [file, count] of operationsPerFile) if (count > 1) problems.push(`${file}: ${count} operations, expected one per file`);
    expect(problems).toEqual([]);
  });

  it('stay within the server’s document limits, as Apollo Client sends them', async () => {
    const over: string[] = [];
    for (const { file, name, document } of await exportedDocuments()) {
      if (!document.definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION)) continue;
      const refused = await limitErrorsOf(document);
      if (refused.length > 0) over.push(`${file} ${name}: ${refused.join(' ')}`);
    }
    expect(over).toEqual([]);
  });

  it('notices a document over the limits (the check itself works)', async () => {
    // The admin app's account page with a literal page size, which the cost counts 15 times: over 5000.
    const { ACCOUNT_DETAIL_QUERY } = await import('../../web/src/modules/staff/graphql/account-detail.query.ts');
    const literal = parse(print(ACCOUNT_DETAIL_QUERY).replace(', $requests: Int!', '').replace('first: $requests', 'first: 15'));
    expect(await limitErrorsOf(literal)).toEqual([expect.stringMatching(/Query Cost limit of 5000 exceeded/)]);
  });

  it('rejects an operation the schema does not have (the check itself works)', () => {
    expect(errorsOf(parse('query Broken { plans { id priceInDollars } }'))).toEqual([
      'Cannot query field "priceInDollars" on type "Plan".',
    ]);
    expect(errorsOf(parse('fragment PlanFragment on Plan { id }'))).toEqual([]);
  });
});

/** The server's own limit plugins, run by graphql-yoga on the document as Apollo Client sends it; the limits' refusals only. */
// The schema is built by yoga's own graphql (under vitest, this file's `graphql` import is another copy).
const limited = createYoga({ schema: createSchema({ typeDefs: readFileSync(resolve(repoRoot, 'schema.graphql'), 'utf8') }), plugins: useDocumentLimits({ production: true, suggestions: false, principalOf: () => null }), logging: false, maskedErrors: false });

async function limitErrorsOf(document: DocumentNode): Promise<string[]> {
  const response = await limited.fetch('http://localhost/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: print(addTypenameToDocument(document)) }),
  });
  const body = (await response.json()) as { errors?: { message: string }[] };
  return (body.errors ?? []).map((error) => error.message).filter((message) => /limit of \d+ exceeded/i.test(message));
}

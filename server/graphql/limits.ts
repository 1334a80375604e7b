/**
 * What one GraphQL document may ask for (issue 15: 10,000 aliases of `plans` cost 2 s of CPU and 278 MB):
 * GraphQL Armor's limits on aliases, depth, cost, tokens and directives, field suggestions only in
 * development, and introspection only in development or for signed-in staff — the committed
 * `schema.graphql` is the public contract. Limits answer `invalid_request` (400), like any invalid document.
 */
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Principal } from '../modules/identity/principal.ts';

export interface LimitOptions {
  production: boolean;
  /** The caller of an operation, from the context envelop hands to validation. */
  principalOf(context: Record<string, unknown>): Principal | null;
}

export const documentLimits = { aliases: 15, depth: 10, cost: 5000, tokens: 5000, directives: 20 } as const;

/**
 * graphql-js's `NoSchemaIntrospectionCustomRule`, by field name: its type checks fail when yoga and this
 * module load different builds of graphql (the dual-package hazard), a name check cannot.
 */
const noIntrospection: ValidationRule = (context) => ({
  Field(node) {
    const name = node.name.value;
    if (name === '__schema' || name === '__type') {
      context.reportError(new GraphQLError(`GraphQL introspection has been disabled, but the requested query contained the field "${name}". The schema is published as schema.graphql.`, { nodes: node }));
    }
  },
});

export function useDocumentLimits(options: LimitOptions): Plugin[] {
  const armor = EnvelopArmorPlugin({
    maxAliases: { n: documentLimits.aliases },
    maxDepth: { n: documentLimits.depth, flattenFragments: true },
    costLimit: { maxCost: documentLimits.cost },
    maxTokens: { n: documentLimits.tokens },
    maxDirectives: { n: documentLimits.directives },
    blockFieldSuggestion: { enabled: options.production },
  }) as Plugin;
  const introspection: Plugin = {
    onValidate: ({ context, addValidationRule }) => {
      if (!options.production) return;
      const role = options.principalOf(context as Record<string, unknown>)?.role;
      if (role !== 'support' && role !== 'admin') addValidationRule(noIntrospection);
    },
  };
  return [armor, introspection];
}

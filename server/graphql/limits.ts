/**
 * What one GraphQL document may ask for (issue 15: 10,000 aliases of `plans` cost 2 s of CPU and 278 MB):
 * GraphQL Armor's limits on aliases, depth, cost, tokens and directives, "Did you mean …?" suggestions only
 * with `graphql.suggestions: true`, and introspection only in development or for signed-in staff — the
 * committed `schema.graphql` is the public contract. Limits answer `invalid_request` (400), like any invalid
 * document.
 */
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, type ExecutionArgs, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Principal } from '../authz/principal.ts';

export interface LimitOptions {
  production: boolean;
  /** `graphql.suggestions`: let error messages suggest field, argument, type and enum value names. */
  suggestions: boolean;
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
    // Its message rewrite misses enum values ("Did you mean the enum value …?"): useNoSuggestions below instead.
    blockFieldSuggestion: { enabled: false },
  }) as Plugin;
  const introspection: Plugin = {
    onValidate: ({ context, addValidationRule }) => {
      if (!options.production) return;
      const role = options.principalOf(context as Record<string, unknown>)?.role;
      if (role !== 'support' && role !== 'admin') addValidationRule(noIntrospection);
    },
  };
  return options.suggestions ? [armor, introspection] : [armor, introspection, useNoSuggestions];
}

/**
 * graphql-js's own `hideSuggestions`, in validation and in the coercion of variables (execute and
 * subscribe): no error names a field, argument, type or enum value the caller did not write. Suggestions
 * spell out a schema to anyone guessing at it, introspection off or not.
 */
const useNoSuggestions: Plugin = {
  onValidate: ({ validateFn, setValidationFn }) => {
    setValidationFn((schema, document, rules, validationOptions, typeInfo) => validateFn(schema, document, rules, { ...validationOptions, hideSuggestions: true }, typeInfo));
  },
  onExecute: ({ args }) => {
    hideSuggestions(args);
    return { onExecuteDone: ({ result }) => stripSuggestions(result) };
  },
  onSubscribe: ({ args }) => {
    hideSuggestions(args);
    return { onSubscribeResult: ({ result }) => stripSuggestions(result) };
  },
};

/** Envelop types execution arguments as graphql 15's; graphql 16.10+ and the yoga executor read this one too. */
function hideSuggestions(args: object): void {
  Object.assign(args, { hideSuggestions: true } satisfies Pick<ExecutionArgs, 'hideSuggestions'>);
}

/** graphql-js's wording: `Did you mean "a", "b", or "c"?`, `Did you mean the enum value "A"?`. */
const suggestion = / ?Did you mean [^?]*\?/g;

/**
 * @graphql-tools/executor 2.1 coerces an enum variable without passing `hideSuggestions` on, so its error
 * still ends in "Did you mean the enum value …?": cut the sentence from the errors of a finished result.
 */
function stripSuggestions(result: unknown): void {
  const errors = (result as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) return;
  for (const error of errors as Error[]) error.message = error.message.replace(suggestion, '');
}

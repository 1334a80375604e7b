/**
 * The Pothos builder: plugins and scalars only. Types live next to their domain in `*.schema.ts`;
 * `graphql/schema.ts` imports them all and builds the schema. This floor stands below the modules, so
 * their `*.schema.ts` import it downwards.
 *
 * The one auth scope is `signedIn`: who may do what is decided by the services (`server/authz/`), so no
 * transport can skip it and GraphQL holds no second copy of the rules.
 */
import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { AppError, bilingual } from '../errors/app-error.ts';
import type { GraphQLContext } from './context.ts';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  AuthScopes: { signedIn: boolean };
  Scalars: {
    Micros: { Input: number; Output: number };
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (context) => ({ signedIn: context.principal !== null }),
    // Signed out: say why when the browser's cookie was refused (e.g. the account is disabled).
    unauthorizedError: (_parent, context) => (context.principal ? new AppError('forbidden') : (context.signedOutReason ?? new AppError('sign_in_required'))),
  },
});

builder.queryType({ description: 'Read the catalogue, your account and its usage.' });
builder.mutationType({ description: 'Sign in and out, manage your API keys, sessions and device logins; staff actions on accounts.' });
builder.subscriptionType({ description: 'Live updates over graphql-ws (subprotocol graphql-transport-ws) on /graphql.' });

builder.scalarType('Micros', {
  description: 'Money in integer micro-units of the stated currency (1 unit = 1,000,000 micros); always a safe integer.',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new AppError('invalid_request', bilingual('Micros must be a safe integer.', 'Micros 必须是安全范围内的整数。'));
    return value;
  },
});

builder.scalarType('DateTime', {
  description: 'An instant, as an ISO 8601 string in UTC.',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new AppError('invalid_request', bilingual('DateTime must be an ISO 8601 string.', 'DateTime 必须是 ISO 8601 格式的字符串。'));
    return date;
  },
});

builder.scalarType('JSON', {
  description: 'Any JSON value (an object, as recorded).',
  serialize: (value) => value,
  parseValue: (value) => value,
});

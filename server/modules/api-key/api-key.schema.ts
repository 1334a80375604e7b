import { builder } from '../../graphql-core/builder.ts';
import type { ApiKeyView, CreatedApiKey } from './api-key.service.ts';
import { keyLimitsArg, KeyLimitsInputRef, KeyLimitsRef } from './key-limits.schema.ts';

export const ApiKeyRef = builder.objectRef<ApiKeyView>('ApiKey').implement({
  description: 'A personal API key (svc_live_…). The full token is only ever shown at creation.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Key id.' }),
    name: t.exposeString('name', { description: 'Your label for the key.' }),
    prefix: t.exposeString('prefix', { description: 'First 12 characters of the token.' }),
    last4: t.exposeString('last4', { description: 'Last 4 characters of the token.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'Creation time.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'Last use (recorded within seconds), or null.' }),
    limits: t.expose('limits', { type: KeyLimitsRef, description: "The key's spend caps, rpm, model allow-list and expiry, with today's and this month's spend." }),
  }),
});

const CreatedApiKeyRef = builder.objectRef<CreatedApiKey>('CreatedApiKey').implement({
  description: 'A newly minted key with its token: copy it now, it is not shown again.',
  fields: (t) => ({
    key: t.expose('key', { type: ApiKeyRef, description: 'The stored key.' }),
    token: t.exposeString('token', { description: 'The full token (Authorization: Bearer <token>), shown once.' }),
  }),
});

builder.queryField('apiKeys', (t) =>
  t.field({
    type: [ApiKeyRef],
    authScopes: { signedIn: true },
    description: 'Your personal API keys (needs a web session).',
    resolve: (_root, _args, { principal, services }) => services.apiKeys.list(principal),
  }),
);

builder.mutationField('createApiKey', (t) =>
  t.field({
    type: CreatedApiKeyRef,
    authScopes: { signedIn: true },
    description: 'Mints a personal API key (needs a web session). The token is in this response only.',
    args: {
      name: t.arg.string({ required: true, description: 'A label, 1 to 100 characters.' }),
      limits: t.arg({ type: KeyLimitsInputRef, description: 'Spend caps, rpm, model allow-list and expiry (optional).' }),
    },
    resolve: (_root, args, { principal, services }) => services.apiKeys.create(principal, { name: args.name, ...keyLimitsArg(args.limits) }),
  }),
);

builder.mutationField('updateApiKey', (t) =>
  t.field({
    type: ApiKeyRef,
    authScopes: { signedIn: true },
    description: "Renames a personal key or changes its limits (needs a web session). Takes effect at once on every server.",
    args: {
      id: t.arg.id({ required: true, description: 'Key id.' }),
      name: t.arg.string({ description: 'A new label (optional).' }),
      limits: t.arg({ type: KeyLimitsInputRef, description: 'The limits to change; fields left out stay as they are.' }),
    },
    resolve: (_root, args, { principal, services }) =>
      services.apiKeys.update(principal, String(args.id), { ...(args.name == null ? {} : { name: args.name }), ...keyLimitsArg(args.limits) }),
  }),
);

builder.mutationField('revokeApiKey', (t) =>
  t.field({
    type: ApiKeyRef,
    authScopes: { signedIn: true },
    description:
      "Revokes a key; it stops working at once on every server. Your own key: no reason needed (needs a web session). Another account's key: staff only, with a reason, recorded in the audit log.",
    args: {
      id: t.arg.id({ required: true, description: 'Key id.' }),
      reason: t.arg.string({ description: "Why: required when staff revoke another account's key (it goes into the audit log)." }),
    },
    resolve: (_root, args, { principal, services, requestId }) => services.apiKeys.revoke(principal, String(args.id), { reason: args.reason, requestId }),
  }),
);

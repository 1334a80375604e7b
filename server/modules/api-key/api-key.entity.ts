import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../db/base.entity.ts';

export const apiKeyKinds = ['personal', 'enterprise'] as const;
export type ApiKeyKind = (typeof apiKeyKinds)[number];

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    ...baseProperties,
    accountId: p.uuid().index(),
    kind: p.enum(apiKeyKinds).default('personal'),
    name: p.string().length(100),
    /** SHA-256 (hex) of the token; the token itself is shown once and never stored. */
    tokenHash: p.string().length(64).unique(),
    /** First 12 characters of the token, e.g. `svc_live_AbC`. */
    prefix: p.string().length(16),
    last4: p.string().length(4),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    /** Organisation keys: the CIDRs calls may come from; empty = anywhere. */
    allowedCidrs: p.json<string[]>().default([]),
    /** Organisation keys: the member who minted it. */
    createdBy: p.uuid().nullable(),
  },
});

export type IApiKey = InferEntity<typeof ApiKey>;

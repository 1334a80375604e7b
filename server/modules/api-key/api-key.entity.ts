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
    /** Spend caps of this key per calendar day and month, in micros of the configured currency; null = none. */
    budgetDayMicros: p.bigint('number').nullable(),
    budgetMonthMicros: p.bigint('number').nullable(),
    /** Requests per minute for this key, below the plan's; null = the plan's. */
    requestsPerMinute: p.integer().nullable(),
    /** Product model ids this key may call; null = every model the plan includes. */
    allowedModels: p.json<string[]>().nullable(),
    /** After this instant the key is refused (401 `key_expired`); null = until revoked. */
    expiresAt: p.datetime().nullable(),
  },
});

export type IApiKey = InferEntity<typeof ApiKey>;

import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../db/base.entity.ts';

export const sessionKinds = ['web', 'device'] as const;
/** `web`: the `svc_membership_session` cookie; `device`: a bearer session token from device login. */
export type SessionKind = (typeof sessionKinds)[number];

export const Session = defineEntity({
  name: 'Session',
  tableName: 'session',
  properties: {
    ...baseProperties,
    accountId: p.uuid().index(),
    kind: p.enum(sessionKinds),
    /** SHA-256 (hex) of the token; the token itself is never stored. */
    tokenHash: p.string().length(64).unique(),
    clientName: p.string().length(100).nullable(),
    userAgent: p.string().length(512).nullable(),
    ip: p.string().length(64).nullable(),
    lastUsedAt: p.datetime(),
    /** Absolute expiry; web sessions also expire after the idle timeout since `lastUsedAt`. */
    expiresAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
  },
});

export type ISession = InferEntity<typeof Session>;

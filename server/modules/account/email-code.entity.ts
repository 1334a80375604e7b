import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from '../../db/base.entity.ts';

/** A 6-digit one-time sign-in code sent by email. Only its salted SHA-256 is stored. */
export const EmailCode = defineEntity({
  name: 'EmailCode',
  tableName: 'email_code',
  properties: {
    ...baseProperties,
    email: p.string().index(),
    codeHash: p.string().length(64),
    expiresAt: p.datetime(),
    attempts: p.integer().default(0),
    consumedAt: p.datetime().nullable(),
    /** A sign-up's argon2id hash, waiting for the code to prove the address: the account is created then. */
    passwordHash: p.string().nullable(),
  },
});

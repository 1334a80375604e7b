import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { accountRoles } from '../../authz/principal.ts';
import { baseProperties } from '../../db/base.entity.ts';


/** `person`: someone who signs in; `organisation`: an enterprise organisation (DESIGN §8.1), a payer that never signs in. */
export const accountKinds = ['person', 'organisation'] as const;
export type AccountKind = (typeof accountKinds)[number];

export const Account = defineEntity({
  name: 'Account',
  tableName: 'account',
  properties: {
    ...baseProperties,
    /** Stored lower-cased; unique. */
    email: p.string().unique(),
    displayName: p.string().nullable(),
    role: p.enum(accountRoles).default('member'),
    /** Plan package the account is on: `free`, `pro`, `max_x5`, `max_x20` (see config `plans`). */
    planPackage: p.string().default('free'),
    /** When a package given for a limited time ends; a job then returns the account to Free. Null: no end. */
    planPackageUntil: p.datetime().nullable(),
    disabledAt: p.datetime().nullable(),
    /** argon2id PHC string; null for accounts that only sign in by email code or OIDC. Never exposed. */
    passwordHash: p.string().nullable(),
    emailVerifiedAt: p.datetime().nullable(),
    /** The language the member picked (`en`, `zh-CN`), for the web app and their email; null follows the browser. */
    locale: p.string().length(16).nullable(),
    kind: p.enum(accountKinds).default('person'),
  },
});

export type IAccount = InferEntity<typeof Account>;

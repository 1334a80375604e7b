import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../db/base.entity.ts';

/** A public client (no secret) registered by RFC 7591 dynamic registration: an MCP client on someone's machine. */
export const OAuthClient = defineEntity({
  name: 'OAuthClient',
  tableName: 'oauth_client',
  properties: {
    ...baseProperties,
    clientName: p.string().length(200),
    clientUri: p.string().length(500).nullable(),
    /** Exact redirect URIs; an authorization request must name one of them. */
    redirectUris: p.json<string[]>(),
    softwareId: p.string().length(200).nullable(),
    softwareVersion: p.string().length(100).nullable(),
    createdIp: p.string().length(64).nullable(),
  },
});

export type IOAuthClient = InferEntity<typeof OAuthClient>;

/**
 * `pending`: asked for, waiting on the consent page; `approved`: a one-time code is out; `denied`;
 * `exchanged`: the code became tokens (the row is now the grant the member sees and can revoke).
 */
export const oauthAuthorizationStatuses = ['pending', 'approved', 'denied', 'exchanged'] as const;

/** One authorization request, from `GET /oauth/authorize` to the grant it becomes (or its denial). */
export const OAuthAuthorization = defineEntity({
  name: 'OAuthAuthorization',
  tableName: 'oauth_authorization',
  properties: {
    ...baseProperties,
    clientId: p.uuid(),
    redirectUri: p.string().length(2000),
    /** The client's `state`, echoed on the redirect. */
    clientState: p.string().length(1000).nullable(),
    scope: p.string().length(200),
    /** The RFC 8707 resource the client named, if any. */
    resource: p.string().length(2000).nullable(),
    /** PKCE S256 challenge. */
    codeChallenge: p.string().length(128),
    status: p.enum(oauthAuthorizationStatuses).default('pending'),
    /** Until when the consent page may decide on the request. */
    expiresAt: p.datetime(),
    accountId: p.uuid().nullable(),
    /** The web session that approved or denied. */
    decidedSessionId: p.uuid().nullable(),
    decidedAt: p.datetime().nullable(),
    /** SHA-256 (hex) of the one-time code. */
    codeHash: p.string().length(64).nullable().unique(),
    codeExpiresAt: p.datetime().nullable(),
    /** Where the client exchanged the code from. */
    ip: p.string().length(64).nullable(),
    userAgent: p.string().length(512).nullable(),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});

export type IOAuthAuthorization = InferEntity<typeof OAuthAuthorization>;

export const oauthTokenKinds = ['access', 'refresh'] as const;

/** An access or refresh token issued from an authorization; `rotatedAt` marks a refresh token already used. */
export const OAuthToken = defineEntity({
  name: 'OAuthToken',
  tableName: 'oauth_token',
  properties: {
    ...baseProperties,
    authorizationId: p.uuid().index(),
    kind: p.enum(oauthTokenKinds),
    /** SHA-256 (hex) of the token; the token itself is never stored. */
    tokenHash: p.string().length(64).unique(),
    expiresAt: p.datetime(),
    rotatedAt: p.datetime().nullable(),
  },
});

import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../db/base.entity.ts';

/** `consumed`: approved and the session token has been handed out (exactly once). */
export const deviceAuthStatuses = ['pending', 'approved', 'denied', 'consumed'] as const;

export const DeviceAuthorization = defineEntity({
  name: 'DeviceAuthorization',
  tableName: 'device_authorization',
  properties: {
    ...baseProperties,
    /** SHA-256 (hex) of the device code. */
    deviceCodeHash: p.string().length(64).unique(),
    /** Normalised: 8 characters of BCDFGHJKLMNPQRSTVWXZ, no dash. */
    userCode: p.string().length(8),
    clientName: p.string().length(100),
    status: p.enum(deviceAuthStatuses).default('pending'),
    intervalSeconds: p.integer(),
    expiresAt: p.datetime(),
    lastPolledAt: p.datetime().nullable(),
    /** The first signed-in web session that opened the code; only it may approve or deny. */
    ownerSessionId: p.uuid().nullable(),
    accountId: p.uuid().nullable(),
    /** The device-login session minted at approval. */
    sessionId: p.uuid().nullable(),
    decidedAt: p.datetime().nullable(),
  },
});

export type IDeviceAuthorization = InferEntity<typeof DeviceAuthorization>;

import { randomUUID } from 'node:crypto';
import { p } from '@mikro-orm/core';

/** Columns every table has: a UUID primary key and creation/update times. Spread into `properties`. */
export const baseProperties = {
  id: p.uuid().primary().onCreate(() => randomUUID()),
  createdAt: p.datetime().onCreate(() => new Date()),
  updatedAt: p
    .datetime()
    .onCreate(() => new Date())
    .onUpdate(() => new Date()),
};

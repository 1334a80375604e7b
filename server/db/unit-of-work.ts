import { RequestContext } from '@mikro-orm/core';
import type { Database, Em } from './orm.ts';

/** The request's entity manager (STYLE §7), or a fresh fork outside a request (CLI, graphql-ws, tests). */
export function entityManager(db: Database): Em {
  return (RequestContext.getEntityManager() as Em | undefined) ?? db.orm.em.fork();
}

import type { FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';

/**
 * Remembers every registered route so an unmatched request can tell "no such path" (404) from
 * "path exists, wrong method" (405). Fastify's router only answers the first question.
 */
export function trackRoutes(app: FastifyInstance): (method: string, path: string) => string[] {
  const router = FindMyWay({ ignoreTrailingSlash: true });
  const methods = new Set<string>();
  const list: RegisteredRoute[] = [];
  tables.set(app, list);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      methods.add(method);
      router.on(method as 'GET', route.url, () => undefined);
      list.push({ method, url: route.url });
    }
  });
  return (method, path) => [...methods].filter((m) => m !== method && router.find(m as 'GET', path) !== null);
}

export interface RegisteredRoute {
  method: string;
  /** The route's pattern, e.g. `/api/membership/auth/api-keys/:id`. */
  url: string;
}

const tables = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/**
 * Every route registered on `app` after `trackRoutes` (HEAD and OPTIONS left out): the fuzzer walks them
 * (test/fuzz), so that a new route is fuzzed without being listed anywhere.
 * @internal
 */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  return [...(tables.get(app) ?? [])];
}

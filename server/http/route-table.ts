import type { FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';

/**
 * Remembers every registered route so an unmatched request can tell "no such path" (404) from
 * "path exists, wrong method" (405). Fastify's router only answers the first question.
 */
export function trackRoutes(app: FastifyInstance): (method: string, path: string) => string[] {
  const router = FindMyWay({ ignoreTrailingSlash: true });
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      methods.add(method);
      router.on(method as 'GET', route.url, () => undefined);
    }
  });
  return (method, path) => [...methods].filter((m) => m !== method && router.find(m as 'GET', path) !== null);
}

/** Where the tests find the real servers. CI fails if they are unreachable; nothing is mocked. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * The gateway's HTTP layer and chat client every test app gets unless its test sets them: `TEST_GATEWAY_HTTP_LAYER=fastify`
 * and `TEST_GATEWAY_UPSTREAM_CLIENT=undici` run a suite over the libraries svc's own lane and pool replace.
 */
export const testGatewayModes: Record<string, string> = {
  ...(process.env.TEST_GATEWAY_HTTP_LAYER ? { httpLayer: process.env.TEST_GATEWAY_HTTP_LAYER } : {}),
  ...(process.env.TEST_GATEWAY_UPSTREAM_CLIENT ? { upstreamClient: process.env.TEST_GATEWAY_UPSTREAM_CLIENT } : {}),
};

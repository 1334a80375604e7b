/**
 * Preloaded into Portkey's gateway (`node --import`). Portkey 1.15.2 appends its `x-portkey-*` headers to
 * the upstream's fetch Response; with the @hono/node-server npm resolves today (1.19) that Response's
 * headers are immutable and every *streaming* request fails with `TypeError: immutable`
 * (Portkey-AI/gateway#1389, #1550). Re-wrapping the response, as their fix PR #1551 does, makes it work.
 */
const realFetch = globalThis.fetch;
globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
  const response = await realFetch(input, init);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

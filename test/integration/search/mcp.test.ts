/**
 * `web_search` over MCP and REST, and `svc-2.1-search` through chat completions, each a metered turn:
 * the official MCP SDK client (Client + StreamableHTTPClientTransport) against `POST /v1/mcp`, the REST
 * tool call, the discovery document, the openai SDK on the chat model; billing, refunds, the cache and two
 * instances sharing it. Real PostgreSQL and Redis; the provider is the scripted SearXNG server, and the
 * embedded provider answers from a corpus the `svc` command ingests.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { meteredCost } from '../../../server/metering/pricing.ts';
import { TokenEstimate, tokenizer } from '../../../server/modules/gateway/token-estimate.ts';
import { outputTokensBase, outputTokensPerResult } from '../../../server/modules/search/search.executor.ts';
import type { SvcSearchV1 } from '../../../server/modules/search/search.output.ts';
import { startScriptedSearxng, type ScriptedSearxng } from '../../fixtures/scripted-searxng.ts';
import { embeddedMode, realMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { assertSvcSearchV1 } from '../../helpers/search-schema.ts';
import { createMember, ledgerRows, relaxedLimits, type LedgerRow, type Member } from '../gateway/harness.ts';
import type { TestDatabase } from '../../helpers/database.ts';
import { svc, writeCorpus } from './search-harness.ts';

let searxng: ScriptedSearxng;
let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let database: TestDatabase;

const searchConfig = (url: string) => ({ ...relaxedLimits, search: { provider: 'searxng', searxng: { url, timeoutMs: 500 }, maxResults: 10, cacheSeconds: 0 } });

beforeAll(async () => {
  searxng = await startScriptedSearxng();
  mode = await realMode();
  database = mode.database;
  app = await startApp(mode.config, { config: searchConfig(searxng.url) });
});

afterAll(async () => {
  await app?.close();
  await searxng?.close();
  await mode?.cleanup();
});

beforeEach(() => {
  searxng.mode = 'ok';
  searxng.delayMs = 2000;
});

async function mcpClient(target: TestApp, key: string | null): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${target.url}/v1/mcp`), { requestInit: { headers } }));
  return client;
}

async function countTokens(text: string): Promise<number> {
  return new TokenEstimate(await tokenizer()).count(text);
}

function rates() {
  return app.app.services.registry.get('svc-2.1-search')!.rates;
}

async function oneRow(member: Member, count = 1): Promise<LedgerRow> {
  const rows = await ledgerRows(database, member.accountId, count);
  expect(rows).toHaveLength(count);
  return rows.at(-1)!;
}

describe('MCP (Streamable HTTP, official SDK client)', () => {
  it('connects with a key, lists web_search and calls it: structuredContent is svc.search.v1 with a text copy, billed as svc-2.1-search', async () => {
    const member = await createMember(app);
    const client = await mcpClient(app, member.key);
    expect(client.getServerVersion()).toMatchObject({ name: 'svc' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {} });

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['web_search']);
    const [tool] = tools;
    expect(tool!.inputSchema).toMatchObject({ type: 'object', required: ['query'], properties: { query: { type: 'string' }, maxResults: { type: 'integer' } } });
    expect(tool!.outputSchema).toMatchObject({ type: 'object', title: 'svc.search.v1' });

    const query = 'streamable http search';
    // The SDK client validates structuredContent against the tool's outputSchema itself.
    const result = await client.callTool({ name: 'web_search', arguments: { query, maxResults: 3 } });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as unknown as SvcSearchV1;
    assertSvcSearchV1(structured);
    expect(structured).toMatchObject({ object: 'svc.search.v1', query, provider: 'searxng' });
    expect(structured.results).toHaveLength(3);
    expect(structured.results[0]).toMatchObject({ rank: 1, url: 'https://www.example.org/alpha', domain: 'example.org', score: 1 });
    const content = result.content as { type: string; text: string }[];
    expect(content).toHaveLength(1);
    expect(content[0]!.type).toBe('text');
    expect(JSON.parse(content[0]!.text)).toEqual(structured);
    expect(searxng.requests.at(-1)!.get('q')).toBe(query);

    // One turn of svc-2.1-search: input = the query's tokens, output = the returned JSON's tokens.
    const row = await oneRow(member);
    expect(row).toMatchObject({ product: 'search', model: 'svc-2.1-search', unit: 'search', status: 'ok', stream: false });
    expect(Number(row.unit_quantity)).toBe(1);
    expect(row.input_tokens).toBe(await countTokens(query));
    expect(row.output_tokens).toBe(await countTokens(content[0]!.text));
    expect(Number(row.cost_micros)).toBe(meteredCost(rates(), { inputTokens: row.input_tokens, outputTokens: row.output_tokens }));
    expect(Number(row.cost_micros)).toBeGreaterThan(0);
    // Reserved before the provider call: every byte of the query, and the output budget of 3 results.
    expect(Number(row.reserved_micros)).toBe(meteredCost(rates(), { inputTokens: Buffer.byteLength(query), outputTokens: outputTokensBase + 3 * outputTokensPerResult }));
    await client.close();
  });

  it('refuses a client without a token, or with a bad one: 401 with WWW-Authenticate naming the protected resource metadata', async () => {
    // The SDK's StreamableHTTPError carries the HTTP status as its code.
    await expect(mcpClient(app, null)).rejects.toMatchObject({ code: 401 });
    await expect(mcpClient(app, 'svc_live_not-a-real-key')).rejects.toMatchObject({ code: 401 });

    const response = await fetch(`${app.url}/v1/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate');
    expect(challenge).toBe(`Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/v1/mcp", scope="mcp"`);
    expect(await response.json()).toMatchObject({ ok: false, code: 'sign_in_required', stage: 'auth' });

    const metadata = await fetch(`${app.url}/.well-known/oauth-protected-resource`);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: app.url, authorization_servers: [app.url], bearer_methods_supported: ['header'] });
    const pathMetadata = await fetch(`${app.url}/.well-known/oauth-protected-resource/v1/mcp`);
    expect(await pathMetadata.json()).toMatchObject({ resource: `${app.url}/v1/mcp` });

    // The discovery document and the REST call are protected the same way.
    for (const [method, path] of [
      ['GET', '/v1/mcp'],
      ['POST', '/v1/mcp/tools/call'],
    ] as const) {
      const refused = await fetch(`${app.url}${path}`, { method, headers: method === 'POST' ? { 'content-type': 'application/json' } : {}, body: method === 'POST' ? '{}' : undefined });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('resource_metadata=');
    }
  });

  it('refuses a request from a foreign Origin and accepts its own', async () => {
    const member = await createMember(app);
    const post = (origin: string) =>
      fetch(`${app.url}/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.key}`, origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const foreign = await post('https://evil.example');
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ code: 'forbidden' });
    // Another name for the same address (what a DNS-rebinding page would send) is foreign too.
    expect((await post(app.url.replace('127.0.0.1', 'localhost'))).status).toBe(403);
    const own = await post(app.url);
    expect(own.status).toBe(200);
    expect(((await own.json()) as { result: { tools: { name: string }[] } }).result.tools[0]!.name).toBe('web_search');
  });

  it('a provider failure is an isError result with a clear message, and the turn is refunded', async () => {
    const member = await createMember(app);
    const client = await mcpClient(app, member.key);
    searxng.mode = 'error';
    const result = await client.callTool({ name: 'web_search', arguments: { query: 'provider is down' } });
    expect(result.isError).toBe(true);
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text).toMatch(/^web_search failed \(upstream_error\): /);
    expect(text).toMatch(/refunded/);
    expect(result.structuredContent).toBeUndefined();
    const row = await oneRow(member);
    expect(row).toMatchObject({ product: 'search', status: 'refunded', input_tokens: 0, output_tokens: 0 });
    expect(Number(row.cost_micros)).toBe(0);

    // Bad arguments are an isError result too (the agent can correct itself); an unknown tool is a JSON-RPC error.
    searxng.mode = 'ok';
    const bad = await client.callTool({ name: 'web_search', arguments: { query: '' } });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]!.text).toContain('query must not be empty');
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(McpError);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it('tool_call_arguments_of_the_wrong_type_are_invalid_params_naming_the_field: −32602, not −32603 with schema text', async () => {
    const member = await createMember(app);
    const client = await mcpClient(app, member.key);
    const cases: [unknown, string][] = [
      ['x', 'params.arguments must be an object with query (string) and optionally maxResults (integer), not a string.'],
      [['query'], 'params.arguments must be an object with query (string) and optionally maxResults (integer), not an array.'],
      [42, 'params.arguments must be an object with query (string) and optionally maxResults (integer), not a number.'],
    ];
    for (const [args, message] of cases) {
      const refused = await client.callTool({ name: 'web_search', arguments: args as Record<string, unknown> }).catch((error: unknown) => error);
      expect(refused, JSON.stringify(args)).toBeInstanceOf(McpError);
      expect(refused).toMatchObject({ code: -32602 });
      expect((refused as McpError).message).toBe(`MCP error -32602: ${message}`);
    }
    const nameless = await client.callTool({ name: 7 as unknown as string, arguments: {} }).catch((error: unknown) => error);
    expect(nameless).toMatchObject({ code: -32602, message: 'MCP error -32602: params.name must be the name of a tool (a string): web_search.' });
    // The server is still answering on the same connection; nothing was billed.
    expect((await client.callTool({ name: 'web_search', arguments: { query: 'after a bad call' } })).isError).toBeFalsy();
    await client.close();
    expect(await ledgerRows(database, member.accountId, 1)).toHaveLength(1);
  });

  it('maxResults_above_the_maximum_is_refused_naming_it: an isError result, not a silently smaller answer', async () => {
    const member = await createMember(app);
    const client = await mcpClient(app, member.key);
    const asked = searxng.requests.length;
    const result = await client.callTool({ name: 'web_search', arguments: { query: 'too many', maxResults: 11 } });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toContain("maxResults is 11, above this server's maximum of 10; ask for at most 10 results.");
    expect(result.structuredContent).toBeUndefined();
    expect(searxng.requests.length).toBe(asked);
    const most = await client.callTool({ name: 'web_search', arguments: { query: 'as many as allowed', maxResults: 10 } });
    expect(most.isError).toBeFalsy();
    await client.close();
    expect(await ledgerRows(database, member.accountId, 1)).toHaveLength(1);
  });

  it('answers a plain tools/call (svc answers it itself) exactly as the SDK answers the same call in a batch of one', async () => {
    const member = await createMember(app);
    const message = (id: number | string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'web_search', arguments: args } });
    const post = (body: unknown) =>
      fetch(`${app.url}/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify(body),
      });
    // What differs from one answer to the next: the ids, the search's latency, and the body's length with them.
    const comparable = async (response: Response) => ({
      status: response.status,
      headers: [...response.headers].filter(([name]) => !['date', 'content-length', 'x-svc-request-id', 'x-request-id'].includes(name)),
      body: (await response.text()).replace(/srch_[A-Za-z0-9_-]+/g, 'srch_').replace(/mbr_[A-Za-z0-9_-]+/g, 'mbr_').replace(/(latencyMs\\?":)\d+/g, '$1'),
    });
    const cases: [number | string, Record<string, unknown>][] = [
      [7, { query: 'parity' }],
      ['call-8', { query: 'parity', maxResults: 2 }],
      // An isError result: the SDK gives its keys in its schema's order.
      [9, { query: 'parity', maxResults: 50 }],
    ];
    for (const [id, args] of cases) {
      const own = await comparable(await post(message(id, args)));
      const sdk = await comparable(await post([message(id, args)]));
      expect(own.status).toBe(200);
      expect(own).toEqual(sdk);
    }
    searxng.mode = 'forbidden';
    expect(await comparable(await post(message(10, { query: 'parity' })))).toEqual(await comparable(await post([message(10, { query: 'parity' })])));
  });
});

describe('discovery', () => {
  it('GET /v1/mcp is the discovery document; asking only for an event stream, or DELETE, is 405', async () => {
    const member = await createMember(app);
    const auth = { authorization: `Bearer ${member.key}` };
    const response = await fetch(`${app.url}/v1/mcp`, { headers: auth });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'svc.mcp.server',
      name: 'svc',
      transport: { type: 'streamable-http', url: `${app.url}/v1/mcp` },
      tools: [{ name: 'web_search', qualifiedName: 'mcp__svc__web_search', inputSchema: { type: 'object' }, outputSchema: { title: 'svc.search.v1' } }],
    });
    expect((body.tools as { description: string }[])[0]!.description.length).toBeGreaterThan(20);

    const stream = await fetch(`${app.url}/v1/mcp`, { headers: { ...auth, accept: 'text/event-stream' } });
    expect(stream.status).toBe(405);
    expect(await stream.json()).toMatchObject({ code: 'method_not_allowed' });
    const del = await fetch(`${app.url}/v1/mcp`, { method: 'DELETE', headers: auth });
    expect(del.status).toBe(405);
  });
});

describe('REST tool call', () => {
  const call = (key: string, body: unknown) =>
    fetch(`${app.url}/v1/mcp/tools/call`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('answers {ok, name, result} with svc.search.v1, billed', async () => {
    const member = await createMember(app);
    const response = await call(member.key, { name: 'web_search', arguments: { query: 'rest tool call' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-limit')).not.toBeNull();
    const text = await response.text();
    const body = JSON.parse(text) as { ok: boolean; name: string; result: SvcSearchV1 };
    expect(body).toMatchObject({ ok: true, name: 'web_search' });
    assertSvcSearchV1(body.result);
    // The fixture's nine results less a relative, a javascript:, an ftp: URL and a duplicate.
    expect(body.result.results).toHaveLength(4);
    const row = await oneRow(member);
    expect(row).toMatchObject({ product: 'search', status: 'ok' });
    expect(row.output_tokens).toBe(await countTokens(JSON.stringify(body.result)));
  });

  it('an unknown tool is 404 tool_not_found; bad arguments are 400 naming the field; neither is billed', async () => {
    const member = await createMember(app);
    const unknown = await call(member.key, { name: 'fetch_page', arguments: { url: 'https://example.org' } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ ok: false, code: 'tool_not_found', error: { param: 'name' } });

    const cases: [unknown, string][] = [
      [{ name: 'web_search', arguments: {} }, 'arguments.query'],
      [{ name: 'web_search' }, 'arguments.query'],
      [{ name: 'web_search', arguments: { query: 42 } }, 'arguments.query'],
      [{ name: 'web_search', arguments: { query: 'x'.repeat(401) } }, 'arguments.query'],
      [{ name: 'web_search', arguments: { query: 'ok', maxResults: 0 } }, 'arguments.maxResults'],
      [{ name: 'web_search', arguments: { query: 'ok', maxResults: 'ten' } }, 'arguments.maxResults'],
      [{ name: 'web_search', arguments: { query: 'ok', maxResults: 11 } }, 'arguments.maxResults'],
      [{ name: 'web_search', arguments: { query: 'ok', limit: 3 } }, 'arguments.limit'],
      [{ name: 'web_search', arguments: 'ok' }, 'arguments'],
      [{ arguments: { query: 'ok' } }, 'name'],
    ];
    for (const [body, param] of cases) {
      const response = await call(member.key, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const envelope = (await response.json()) as { code: string; message: string; error: { param: string } };
      expect(envelope.code).toBe('invalid_request');
      expect(envelope.error.param).toBe(param);
      expect(envelope.message).toContain(param);
    }
    await settled(app);
    expect(await ledgerRows(database, member.accountId, 0)).toEqual([]);
  });

  it('maxResults_above_the_maximum_is_refused_naming_it: 400 invalid_request in both languages', async () => {
    const member = await createMember(app);
    const response = await call(member.key, { name: 'web_search', arguments: { query: 'too many', maxResults: 50 } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: 'invalid_request',
      error: { param: 'arguments.maxResults' },
      message: "arguments.maxResults is 50, above this server's maximum of 10; ask for at most 10 results.",
      messageZh: 'arguments.maxResults 为 50，超过本服务器的上限 10；最多可请求 10 条结果。',
    });
  });

  it('a provider failure is a 502/503/504 with stage upstream and the quota refunded', async () => {
    const member = await createMember(app);
    const expectations = [
      ['error', 502, 'upstream_error'],
      ['slow', 504, 'upstream_timeout'],
    ] as const;
    for (const [failure, status, code] of expectations) {
      searxng.mode = failure;
      const response = await call(member.key, { name: 'web_search', arguments: { query: `failing with ${failure}` } });
      expect(response.status).toBe(status);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ ok: false, code, stage: 'upstream', debug: { productModel: 'svc-2.1-search', upstreamHost: 'searxng', quotaRefunded: true } });
      expect(JSON.stringify(body)).not.toContain(searxng.url);
    }
    const rows = await ledgerRows(database, member.accountId, 2);
    expect(rows.map((row) => [row.status, Number(row.cost_micros)])).toEqual([
      ['refunded', 0],
      ['refunded', 0],
    ]);
  });
});

describe('svc-2.1-search through chat completions', () => {
  it('answers the last user message with svc.search.v1 JSON and url_citation annotations', async () => {
    const member = await createMember(app);
    const completion = await member.client.chat.completions.create({
      model: 'svc-2.1-search',
      messages: [
        { role: 'user', content: 'an earlier question' },
        { role: 'assistant', content: 'an earlier answer' },
        { role: 'user', content: 'chat model search' },
      ],
    });
    expect(completion).toMatchObject({ object: 'chat.completion', model: 'svc-2.1-search' });
    const message = completion.choices[0]!.message;
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    const result = JSON.parse(message.content!) as SvcSearchV1;
    assertSvcSearchV1(result);
    expect(result.query).toBe('chat model search');
    expect(searxng.requests.at(-1)!.get('q')).toBe('chat model search');
    const annotations = message.annotations!;
    expect(annotations).toHaveLength(result.results.length);
    for (const [index, annotation] of annotations.entries()) {
      expect(annotation.type).toBe('url_citation');
      const citation = annotation.url_citation;
      expect(citation).toMatchObject({ url: result.results[index]!.url, title: result.results[index]!.title });
      // The positions point at the URL inside the content.
      expect(message.content!.slice(citation.start_index, citation.end_index)).toBe(JSON.stringify(citation.url).slice(1, -1));
    }
    const row = await oneRow(member);
    expect(row).toMatchObject({ product: 'search', model: 'svc-2.1-search', status: 'ok' });
    expect(completion.usage).toMatchObject({ prompt_tokens: row.input_tokens, completion_tokens: row.output_tokens });
    expect(row.output_tokens).toBe(await countTokens(message.content!));
  });

  it('streams the answer as one content chunk carrying the annotations', async () => {
    const member = await createMember(app);
    const stream = await member.client.chat.completions.create({
      model: 'svc-2.1-search',
      messages: [{ role: 'user', content: 'streamed search' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const contentChunks = chunks.filter((chunk) => chunk.choices[0]?.delta?.content);
    expect(contentChunks).toHaveLength(1);
    const delta = contentChunks[0]!.choices[0]!.delta as { role?: string; content: string; annotations?: { type: string; url_citation: { url: string } }[] };
    expect(delta.role).toBe('assistant');
    const result = JSON.parse(delta.content) as SvcSearchV1;
    assertSvcSearchV1(result);
    expect(delta.annotations!.map((annotation) => annotation.url_citation.url)).toEqual(result.results.map((item) => item.url));
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: await countTokens(delta.content) });
    await oneRow(member);
  });

  it('names its request id once, through chat completions and through the REST tool call', async () => {
    const member = await createMember(app);
    const headers = { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' };
    const answers = [
      await fetch(`${app.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'svc-2.1-search', messages: [{ role: 'user', content: 'one id' }] }) }),
      await fetch(`${app.url}/v1/mcp/tools/call`, { method: 'POST', headers, body: JSON.stringify({ name: 'web_search', arguments: { query: 'one id' } }) }),
    ];
    for (const response of answers) {
      expect(response.status).toBe(200);
      // A header sent twice reads as "a, b".
      expect(response.headers.get('x-svc-request-id')).toMatch(/^mbr_[A-Za-z0-9_-]{26}$/);
      expect(response.headers.get('x-request-id')).toBe(response.headers.get('x-svc-request-id'));
      await response.text();
    }
    await oneRow(member, 2);
  });

  it('a provider failure is refunded before any output, with the upstream code', async () => {
    const member = await createMember(app);
    searxng.mode = 'forbidden';
    const failed = await member.client.chat.completions.create({ model: 'svc-2.1-search', messages: [{ role: 'user', content: 'json disabled' }] }).catch((error: unknown) => error);
    expect(failed).toMatchObject({ status: 502, code: 'upstream_error' });
    const row = await oneRow(member);
    expect(row.status).toBe('refunded');
  });

  it('the billing shows in GET /api/membership/usage (premium pools)', async () => {
    const member = await createMember(app);
    await member.client.chat.completions.create({ model: 'svc-2.1-search', messages: [{ role: 'user', content: 'usage shows searches' }] });
    const row = await oneRow(member);
    await settled(app);
    const response = await fetch(`${app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${member.key}` } });
    const body = (await response.json()) as { pools: { class: string; window: string; used: { amountMicros: number } }[] };
    for (const pool of body.pools) {
      expect(pool.used.amountMicros, `${pool.class}/${pool.window}`).toBe(pool.class === 'premium' ? Number(row.cost_micros) : 0);
    }
  });
});

describe('cache and instances', () => {
  let cached: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    // Two instances on the same PostgreSQL and Redis, with the short cache on.
    const config = { ...searchConfig(searxng.url), search: { ...searchConfig(searxng.url).search, cacheSeconds: 60 } };
    cached = await startApp(mode.config, { config });
    second = await startApp(mode.config, { config });
  });
  afterAll(async () => {
    await cached?.close();
    await second?.close();
  });

  it('an identical query within cacheSeconds is answered from the cache (Redis, shared by instances) and still billed', async () => {
    const member = await createMember(cached);
    const before = searxng.requests.length;
    const query = `cached query ${Date.now()}`;
    const call = (target: TestApp) =>
      fetch(`${target.url}/v1/mcp/tools/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'web_search', arguments: { query } }),
      }).then(async (response) => ((await response.json()) as { result: SvcSearchV1 }).result);
    const first = await call(cached);
    const again = await call(cached);
    const other = await call(second);
    expect(searxng.requests.length - before).toBe(1);
    expect(again.results).toEqual(first.results);
    expect(other.results).toEqual(first.results);
    expect(new Set([first.id, again.id, other.id]).size).toBe(3);

    const rows = await ledgerRows(database, member.accountId, 3);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatchObject({ product: 'search', status: 'ok' });
      expect(Number(row.cost_micros)).toBeGreaterThan(0);
    }
    // Both instances' pools agree: three searches' worth.
    await settled(cached, second);
    const principal = await cached.app.services.identity.authenticateBearer(`Bearer ${member.key}`);
    const report = await second.app.services.usage.report(principal.payer);
    const total = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    expect(report.pools.find((pool) => pool.class === 'premium' && pool.window === 'day')!.used.amountMicros).toBe(total);
  });

  it('an MCP client works against either instance (stateless: no session to carry)', async () => {
    const member = await createMember(cached);
    for (const target of [cached, second]) {
      const client = await mcpClient(target, member.key);
      const result = await client.callTool({ name: 'web_search', arguments: { query: 'either instance' } });
      assertSvcSearchV1(result.structuredContent);
      await client.close();
    }
    expect(await ledgerRows(database, member.accountId, 2)).toHaveLength(2);
  });
});

describe('limits, as for chat', () => {
  let limited: TestApp;

  beforeAll(async () => {
    // Free: 3 requests a minute per account. Pro: a premium day pool smaller than one search's reservation.
    const plans = {
      ...defaultPlans,
      free: { ...defaultPlans.free, requestsPerMinute: 3 },
      pro: { ...defaultPlans.pro, pools: { ...defaultPlans.pro.pools, premium: { day: 0.001, week: 5, month: 15 } } },
    };
    limited = await startApp(mode.config, { config: { ...searchConfig(searxng.url), plans } });
  });
  afterAll(() => limited?.close());

  const call = (key: string) =>
    fetch(`${limited.url}/v1/mcp/tools/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'web_search', arguments: { query: 'limited' } }),
    });

  it('the account rate limit holds across the REST call, MCP and the chat model: 429 rate_limited, provider not asked', async () => {
    const member = await createMember(limited);
    expect((await call(member.key)).headers.get('x-ratelimit-remaining')).toBe('2');
    await member.client.chat.completions.create({ model: 'svc-2.1-search', messages: [{ role: 'user', content: 'limited' }] });
    const client = await mcpClient(limited, member.key);
    expect((await client.callTool({ name: 'web_search', arguments: { query: 'limited' } })).isError).toBeFalsy();
    const before = searxng.requests.length;
    const refused = await call(member.key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect(await refused.json()).toMatchObject({ code: 'rate_limited', stage: 'rate_limit' });
    const viaMcp = await client.callTool({ name: 'web_search', arguments: { query: 'limited' } });
    expect(viaMcp.isError).toBe(true);
    expect((viaMcp.content as { text: string }[])[0]!.text).toMatch(/^web_search failed \(rate_limited\): /);
    expect(searxng.requests.length).toBe(before);
    await client.close();
    expect(await ledgerRows(database, member.accountId, 3)).toHaveLength(3);
  });

  it('a search whose worst case does not fit the premium pools is 402 quota_exceeded before the provider is asked', async () => {
    const member = await createMember(limited, { planPackage: 'pro' });
    const before = searxng.requests.length;
    const refused = await call(member.key);
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ code: 'quota_exceeded', stage: 'quota' });
    expect(searxng.requests.length).toBe(before);
    await settled(limited);
    expect(await ledgerRows(database, member.accountId, 0)).toEqual([]);
  });
});

describe('per-IP limit on the MCP endpoint', () => {
  let tight: TestApp;
  beforeAll(async () => {
    tight = await startApp(mode.config, { config: { ...searchConfig(searxng.url), rateLimits: { ipPerMinute: 5 } } });
  });
  afterAll(() => tight?.close());

  it('MCP messages that are not tool calls are charged to the address too, before authentication', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await fetch(`${tight.url}/v1/mcp`, {
        method: 'POST',
        headers: { authorization: 'Bearer svc_live_guessing', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }),
      });
      statuses.push(response.status);
      if (response.status === 429) expect(await response.json()).toMatchObject({ code: 'rate_limited' });
    }
    expect(statuses[0]).toBe(401);
    expect(statuses).toContain(429);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(6);
  });
});

describe('embedded provider', () => {
  let embedded: TestApp;
  let corpus: string;

  beforeAll(async () => {
    embedded = await startApp(mode.config, { config: { ...relaxedLimits, search: { provider: 'embedded', cacheSeconds: 0 } } });
    corpus = writeCorpus();
    // The operator's command, against the same database.
    const run = await svc(['search', 'ingest', corpus, '--base-url', 'https://docs.example.com'], { DATABASE_URL: (mode.config.database as { url: string }).url });
    expect(run.code, run.stderr).toBe(0);
  });
  afterAll(async () => {
    await embedded?.close();
    rmSync(corpus, { recursive: true, force: true });
  });

  it('answers web_search over MCP from the ingested corpus', async () => {
    const member = await createMember(embedded);
    const client = await mcpClient(embedded, member.key);
    const result = await client.callTool({ name: 'web_search', arguments: { query: 'install gateway' } });
    const structured = result.structuredContent as unknown as SvcSearchV1;
    assertSvcSearchV1(structured);
    expect(structured.provider).toBe('embedded');
    expect(structured.results[0]).toMatchObject({ title: 'Installing svc', url: 'https://docs.example.com/guide/install.md', engine: 'embedded' });
    await client.close();
    expect(await ledgerRows(database, member.accountId, 1)).toHaveLength(1);
  });
});

describe('embedded mode (PGlite, no Redis): the default a fresh npm start runs', () => {
  let local: TestApp | undefined;
  let embedded: ReturnType<typeof embeddedMode>;
  let corpus: string;

  beforeAll(async () => {
    embedded = embeddedMode();
    corpus = writeCorpus();
    // PGlite allows one process per data directory: the operator ingests before starting the server.
    const configFile = join(embedded.dataDir, 'svc.yaml');
    writeFileSync(configFile, `database:\n  dataDir: ${JSON.stringify(embedded.dataDir)}\n`);
    const run = await svc(['search', 'ingest', corpus, '--base-url', 'https://docs.example.com'], { SVC_CONFIG: configFile });
    expect(run.code, run.stderr).toBe(0);
    local = await startApp(embedded.config, { config: { search: { cacheSeconds: 60 } } });
  });
  afterAll(async () => {
    await local?.close();
    await embedded?.cleanup();
    rmSync(corpus, { recursive: true, force: true });
  });

  it('searches the ingested corpus over MCP and REST and bills both in the SQL pools', async () => {
    const member = await createMember(local!);
    const client = await mcpClient(local!, member.key);
    const result = await client.callTool({ name: 'web_search', arguments: { query: 'pools per model class' } });
    const structured = result.structuredContent as unknown as SvcSearchV1;
    assertSvcSearchV1(structured);
    expect(structured).toMatchObject({ provider: 'embedded', results: [{ title: 'quotas', url: 'https://docs.example.com/notes/quotas.txt' }] });
    await client.close();
    const again = await fetch(`${local!.url}/v1/mcp/tools/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'web_search', arguments: { query: 'pools  per model class' } }),
    });
    expect(((await again.json()) as { result: SvcSearchV1 }).result.results).toEqual(structured.results);
    await settled(local!);
    const principal = await local!.app.services.identity.authenticateBearer(`Bearer ${member.key}`);
    const report = await local!.app.services.usage.report(principal.payer);
    expect(report.pools.find((pool) => pool.class === 'premium' && pool.window === 'day')!.used.amountMicros).toBeGreaterThan(0);
    const history = await local!.app.services.usage.history(principal.payer, { first: 10, after: null });
    expect(history.nodes).toHaveLength(2);
  });
});

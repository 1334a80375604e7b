/**
 * Every MCP protocol revision the installed SDK supports is accepted: `initialize` echoes the client's
 * version (2024-11-05 through the SDK's latest), later requests may carry it as `MCP-Protocol-Version`,
 * an unknown header value is a 400, and an unknown version in `initialize` is answered with the latest.
 * The SDK's own client negotiates its latest version and works.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { createMember, relaxedLimits, type Member } from '../gateway/harness.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let member: Member;

beforeAll(async () => {
  mode = await realMode();
  app = await startApp(mode.config, { config: relaxedLimits });
  member = await createMember(app);
});

afterAll(async () => {
  await app?.close();
  await mode?.cleanup();
});

async function rpc(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(`${app.url}/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, any> };
}

const initialize = (protocolVersion: string) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'version-test', version: '1' } } });

describe('MCP protocol revisions', () => {
  it('the installed SDK supports the revisions clients send today and before', () => {
    for (const version of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) expect(SUPPORTED_PROTOCOL_VERSIONS).toContain(version);
  });

  it.each(SUPPORTED_PROTOCOL_VERSIONS)('initialize %s is echoed, and tools/list with that MCP-Protocol-Version works', async (version) => {
    const init = await rpc(initialize(version));
    expect(init.status).toBe(200);
    expect(init.body.result).toMatchObject({ protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: 'svc' } });
    expect((await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': version })).status).toBe(202);
    const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-protocol-version': version });
    expect(list.status).toBe(200);
    expect(list.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['web_search']);
  });

  it('an unknown version in initialize is answered with the latest; an unknown MCP-Protocol-Version header is a 400', async () => {
    expect((await rpc(initialize('2099-01-01'))).body.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    const bad = await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('Unsupported protocol version');
  });

  it('the SDK client negotiates its latest revision', async () => {
    const client = new Client({ name: 'latest', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${member.key}` } } });
    await client.connect(transport);
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect((await client.listTools()).tools).toHaveLength(1);
    await client.close();
  });
});

/**
 * One MCP server (official SDK, low-level `Server`: the tools' JSON Schemas are published as they are,
 * not rebuilt from zod) for one authenticated HTTP request. Stateless (DESIGN §8.4): no session id, a new
 * server and transport per POST, so any instance answers any request.
 *
 * `tools/call` of a hosted tool is a metered turn (`pipeline.run`). Whatever stops it — a provider
 * failure (refunded), quota, rate limit, bad arguments — comes back as an `isError` result whose text says
 * what happened and what to do, which an agent can read and act on; an unknown tool is a JSON-RPC error
 * (−32602), as the MCP specification asks. So is a `tools/call` whose `name` or `arguments` has the wrong
 * type (`arguments: "x"`): the SDK would answer −32603 with its schema library's text, so such a call is
 * answered before the SDK sees it, naming the field (`connectMcp`).
 */
import type * as McpServerModule from '@modelcontextprotocol/sdk/server/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type * as McpTransportModule from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type * as McpTypesModule from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../errors/app-error.ts';
import type { ClientSignal } from '../../metering/executor.ts';
import type { MeteringPipeline, TurnOrigin } from '../../metering/pipeline.ts';
import type { Principal } from '../../authz/principal.ts';
import { mcpServerName, type McpTools, type ToolDefinition } from './mcp.tools.ts';
import { serverVersion } from './version.ts';

export interface McpCallContext {
  principal: Principal;
  origin: TurnOrigin;
}

/** The SDK (~4 MB of heap) loads at the first MCP request, so a server nobody calls over MCP never holds it. */
let sdk: Promise<McpSdk> | undefined;
type McpSdk = typeof McpServerModule & typeof McpTransportModule & typeof McpTypesModule;
const mcpSdk = (): Promise<McpSdk> =>
  (sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, transport, types]) => ({ ...server, ...transport, ...types })));

/** A stateless Streamable HTTP transport: JSON responses, no session id. */
export async function createMcpTransport(): Promise<StreamableHTTPServerTransport> {
  const { StreamableHTTPServerTransport: Transport } = await mcpSdk();
  return new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
}

export async function createMcpServer(tools: McpTools, pipeline: MeteringPipeline, context: McpCallContext): Promise<Server> {
  const { Server, ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode } = await mcpSdk();
  const server = new Server(
    { name: mcpServerName, title: 'svc', version: serverVersion },
    {
      capabilities: { tools: {} },
      instructions: 'web_search searches the web and returns svc.search.v1 JSON (ranked results with URLs and snippets). Cite the URLs you use.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.list().map((tool) => ({ ...tool })) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    if (!tools.has(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}. Tools on this server: ${tools.list().map((tool) => tool.name).join(', ')}.`);
    try {
      const planned = tools.plan(name, args ?? {}, { kind: 'return' });
      const result = await pipeline.run(context.principal, planned, context.origin, clientSignalOf(extra.signal));
      // The text copy is the same JSON that was billed (the executor fitted it to the reservation).
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as unknown as Record<string, unknown> };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const refunded = error.options.debug?.quotaRefunded === true;
      const text = `${name} failed (${error.code}): ${error.message}${refunded && !/refunded/.test(error.message) ? ' Your quota for this call was refunded.' : ''} (request ${context.origin.traceId})`;
      return { isError: true, content: [{ type: 'text', text }] };
    }
  });
  return server;
}

/**
 * Connects `server` to `transport`, with a guard in front: a `tools/call` whose params are not shaped
 * like one is answered −32602 (invalid params) with a sentence naming the field, not passed on.
 */
export async function connectMcp(server: Server, transport: StreamableHTTPServerTransport, tools: McpTools): Promise<void> {
  const { ErrorCode } = await mcpSdk();
  await server.connect(transport);
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    const request = message as { method?: unknown; id?: unknown; params?: unknown };
    const refusal = request.method === 'tools/call' && (typeof request.id === 'string' || typeof request.id === 'number') ? malformedToolCall(request.params, tools) : null;
    if (refusal === null) return deliver(message, extra);
    const answer = { jsonrpc: '2.0', id: request.id, error: { code: ErrorCode.InvalidParams, message: refusal } } as JSONRPCMessage;
    void transport.send(answer).catch((error: unknown) => transport.onerror?.(error as Error));
  };
}

/** Why `params` is not a `tools/call` (name: string, arguments: object if given), or null when it is. */
function malformedToolCall(params: unknown, tools: McpTools): string | null {
  if (!isPlainObject(params)) return 'params must be an object with name (string) and arguments (object).';
  if (typeof params.name !== 'string' || params.name === '') {
    return `params.name must be the name of a tool (a string): ${tools.list().map((tool) => tool.name).join(', ')}.`;
  }
  const args = params.arguments;
  if (args !== undefined && !isPlainObject(args)) {
    const tool = tools.list().find((candidate) => candidate.name === params.name);
    return `params.arguments must be an object${tool ? ` with ${argumentSummary(tool)}` : ''}, not ${args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`}.`;
  }
  return null;
}

/** `query (string) and optionally maxResults (integer)`: a tool's arguments in words, from its JSON Schema. */
function argumentSummary(tool: ToolDefinition): string {
  const properties = (tool.inputSchema.properties ?? {}) as Record<string, { type?: string }>;
  const required = new Set((tool.inputSchema.required ?? []) as string[]);
  const describe = (name: string) => `${name} (${properties[name]?.type ?? 'any'})`;
  const names = Object.keys(properties);
  const must = names.filter((name) => required.has(name)).map(describe);
  const may = names.filter((name) => !required.has(name)).map(describe);
  return [must.join(', '), may.length > 0 ? `optionally ${may.join(', ')}` : ''].filter(Boolean).join(' and ');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The SDK's AbortSignal for a request as the pipeline's client signal. */
function clientSignalOf(signal: AbortSignal): ClientSignal {
  return {
    get aborted() {
      return signal.aborted;
    },
    once: (_event, listener) => signal.addEventListener('abort', listener, { once: true }),
    off: (_event, listener) => signal.removeEventListener('abort', listener),
  };
}

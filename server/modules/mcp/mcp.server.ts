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
import type * as McpValidationModule from '@modelcontextprotocol/sdk/validation/ajv';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
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
type McpSdk = typeof McpServerModule & typeof McpTransportModule & typeof McpTypesModule & typeof McpValidationModule;
const mcpSdk = (): Promise<McpSdk> =>
  (sdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]).then(([server, transport, types, validation]) => ({ ...server, ...transport, ...types, ...validation })));

/**
 * One JSON Schema validator for every server: each `Server` otherwise makes its own Ajv instance, and
 * building one (its keywords and rules) cost more than the rest of an MCP request. It only checks what a
 * client answers to a server's own requests (elicitation), which this server never sends.
 */
let validator: AjvJsonSchemaValidator | undefined;

/** A stateless Streamable HTTP transport: JSON responses, no session id. */
export async function createMcpTransport(): Promise<StreamableHTTPServerTransport> {
  const { StreamableHTTPServerTransport: Transport } = await mcpSdk();
  return new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
}

export async function createMcpServer(tools: McpTools, pipeline: MeteringPipeline, context: McpCallContext): Promise<Server> {
  const { Server, ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode, AjvJsonSchemaValidator: Validator } = await mcpSdk();
  const server = new Server(
    { name: mcpServerName, title: 'svc', version: serverVersion },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: (validator ??= new Validator()),
      instructions: 'web_search searches the web and returns svc.search.v1 JSON (ranked results with URLs and snippets). Cite the URLs you use.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.list().map((tool) => ({ ...tool })) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    if (!tools.has(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}. Tools on this server: ${tools.list().map((tool) => tool.name).join(', ')}.`);
    return callTool(tools, pipeline, context, name, args, clientSignalOf(extra.signal));
  });
  return server;
}

/**
 * One `tools/call` of a hosted tool: its result, or the `isError` result an `AppError` becomes. Keys in the
 * order the SDK's result schema gives them (it re-creates the object in that order), so `answerToolCall`'s
 * JSON is the SDK's.
 */
async function callTool(tools: McpTools, pipeline: MeteringPipeline, context: McpCallContext, name: string, args: unknown, signal: ClientSignal): Promise<CallToolResult> {
  try {
    const planned = tools.plan(name, args ?? {}, { kind: 'return' });
    const result = await pipeline.run(context.principal, planned, context.origin, signal);
    // The text copy is the same JSON that was billed (the executor fitted it to the reservation).
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as unknown as Record<string, unknown> };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const refunded = error.options.debug?.quotaRefunded === true;
    const text = `${name} failed (${error.code}): ${error.message}${refunded && !/refunded/.test(error.message) ? ' Your quota for this call was refunded.' : ''} (request ${context.origin.traceId})`;
    return { content: [{ type: 'text', text }], isError: true };
  }
}

/** A `tools/call` of a hosted tool that `answerToolCall` can answer as the SDK would. */
interface PlainToolCall {
  id: string | number;
  name: string;
  args: Record<string, unknown> | undefined;
}

/**
 * The message, when it is the plain case of MCP traffic: one `tools/call` (not a batch) of a tool this server
 * hosts, with only `name` and `arguments`, from a client that accepts JSON and event streams, with a JSON
 * content type and a protocol version the SDK supports (or none). Anything else — every other method, a
 * batch, `_meta` or `task`, a malformed call, a header the SDK would refuse — is null, and goes to the SDK.
 */
export async function plainToolCall(body: unknown, headers: IncomingHttpHeaders, tools: McpTools): Promise<PlainToolCall | null> {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !onlyKeys(body, messageKeys)) return null;
  const { id, params } = body;
  if (!(typeof id === 'string' || Number.isSafeInteger(id)) || !isPlainObject(params) || !onlyKeys(params, paramKeys)) return null;
  const { name, arguments: args } = params;
  if (typeof name !== 'string' || !tools.has(name) || (args !== undefined && !isPlainObject(args))) return null;
  const accept = headers.accept;
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  const type = headers['content-type'];
  if (type !== 'application/json' && !(type !== undefined && /^application\/json; *charset=utf-8$/i.test(type))) return null;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && !(await mcpSdk()).SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) return null;
  return { id: id as string | number, name, args };
}

const messageKeys = new Set(['jsonrpc', 'id', 'method', 'params']);
const paramKeys = new Set(['name', 'arguments']);

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

/**
 * Answers a plain `tools/call` as the SDK's stateless JSON transport would — status 200, `content-type:
 * application/json`, `{result, jsonrpc, id}` or, for an error that is not an `AppError`, the JSON-RPC error
 * the SDK makes of it — without a server, a transport, the web Request and Response the SDK's Node adapter
 * converts to and from, and three schema validations of the message and the result: together more than the
 * search itself cost. A client that goes away aborts the turn, and is sent nothing, as with the SDK.
 */
export async function answerToolCall(call: PlainToolCall, tools: McpTools, pipeline: MeteringPipeline, context: McpCallContext, raw: ServerResponse): Promise<void> {
  const gone = new AbortController();
  const onClose = () => {
    if (!raw.writableFinished) gone.abort();
  };
  raw.on('close', onClose);
  let answer: string;
  try {
    const result = await callTool(tools, pipeline, context, call.name, call.args, clientSignalOf(gone.signal));
    answer = JSON.stringify({ result, jsonrpc: '2.0', id: call.id });
  } catch (error) {
    answer = JSON.stringify({ jsonrpc: '2.0', id: call.id, error: rpcError(error) });
  } finally {
    raw.off('close', onClose);
  }
  if (gone.signal.aborted || raw.destroyed) return;
  raw.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(answer)) }).end(answer);
}

/** The JSON-RPC error the SDK answers for a handler that threw `error`. */
function rpcError(error: unknown): { code: number; message: string; data?: unknown } {
  const { code, message, data } = error as { code?: unknown; message?: string; data?: unknown };
  return { code: Number.isSafeInteger(code) ? (code as number) : -32603, message: message ?? 'Internal error', ...(data !== undefined && { data }) };
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

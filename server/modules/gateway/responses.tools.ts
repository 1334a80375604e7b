/**
 * The Responses API's tools as chat function tools, and the way back. Every tool a current Responses client
 * sends (Codex 0.171 sends `function`, `namespace`, `custom` and `web_search`; with some models
 * `tool_search`; older clients `local_shell`) becomes a function the chat model can call, and the call comes
 * back as the item that client parses:
 *
 *   function               → function `name`                      → `function_call`
 *   namespace {tools}      → `<namespace>__<name>` per tool       → `function_call` / `custom_tool_call` with `namespace`
 *   custom (free-form)     → function `name {input: string}`      → `custom_tool_call {input}`
 *   local_shell            → function `local_shell {command[], …}`→ `local_shell_call {action: exec}`
 *   tool_search (client)   → function `tool_search` (its schema)   → `tool_search_call {arguments}`
 *   web_search(_preview)   → svc runs it (`hosted-search.ts`)      → `web_search_call`
 *
 * A hosted tool svc cannot run (file search, code interpreter, computer use, image generation, remote MCP,
 * server-side tool search) is a 400 naming it.
 */
import { AppError } from '../../errors/app-error.ts';
import { domainList, hostedSearchChatTool, hostedSearchFunction, maxSearchesPerTurn, type HostedSearchTool } from './hosted-search.ts';

export type ToolKind = 'function' | 'custom' | 'local_shell' | 'tool_search';

/** The client's tool behind a chat function name. */
export interface ClientTool {
  kind: ToolKind;
  name: string;
  namespace: string | null;
}

/** Chat function name → the client's tool. A name not in it is an ordinary function. */
export type ToolNames = ReadonlyMap<string, ClientTool>;

export interface PlannedTools {
  chat: unknown[];
  names: ToolNames;
  /** The hosted web search, when the request offers it. */
  search: HostedSearchTool | null;
}

/** A tools array and where it was in the request (`tools`, `input[3].tools`), for errors. */
export interface ToolSource {
  at: string;
  tools: unknown;
}

const webSearchTypes = new Set(['web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11']);

/** The separator between a namespace and a tool's name in the function the chat model sees. */
const NAMESPACE_SEPARATOR = '__';

export function chatFunctionName(name: string, namespace: string | null | undefined): string {
  return namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
}

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every tool of the request (its `tools`, and tools input items added) as chat tools. */
export function planTools(sources: readonly ToolSource[], searchEnabled: boolean): PlannedTools {
  const planned = { chat: [] as unknown[], names: new Map<string, ClientTool>(), search: null as HostedSearchTool | null };
  const add = (at: string, chatTool: { function: { name: string } }, client: ClientTool) => {
    const name = chatTool.function.name;
    if (planned.names.has(name) || (name === hostedSearchFunction && planned.search)) throw invalid(at, `Two tools are called ${JSON.stringify(name)}; tool names must be unique.`);
    planned.names.set(name, client);
    planned.chat.push(chatTool);
  };
  for (const source of sources) {
    if (source.tools === undefined || source.tools === null) continue;
    if (!Array.isArray(source.tools)) throw invalid(source.at, 'tools must be an array.');
    source.tools.forEach((tool: unknown, i) => {
      const at = `${source.at}[${i}]`;
      if (!isObject(tool)) throw invalid(at, 'Each tool must be an object with a type.');
      if (typeof tool.type === 'string' && webSearchTypes.has(tool.type)) {
        if (!searchEnabled) throw invalid(`${at}.type`, `${tool.type} is a hosted tool, and hosted search is off on this server (its model catalogue has no svc-2.1-search).`);
        if (planned.names.has(hostedSearchFunction) || planned.search) throw invalid(at, `Two tools are called "${hostedSearchFunction}"; send the hosted web_search tool or a function of that name, not both.`);
        planned.search = { maxUses: maxSearchesPerTurn, domains: allowedDomains(tool.filters, `${at}.filters`) };
        planned.chat.push(hostedSearchChatTool());
        return;
      }
      if (tool.type === 'namespace') {
        if (typeof tool.name !== 'string' || tool.name.length === 0) throw invalid(`${at}.name`, 'A namespace tool needs a name.');
        if (!Array.isArray(tool.tools)) throw invalid(`${at}.tools`, 'A namespace tool needs tools: its function and custom tools.');
        const namespace = tool.name;
        tool.tools.forEach((inner: unknown, j) => {
          const here = `${at}.tools[${j}]`;
          if (!isObject(inner) || (inner.type !== 'function' && inner.type !== 'custom')) throw invalid(`${here}.type`, 'A namespace holds function and custom tools.');
          const chatTool = inner.type === 'function' ? functionTool(inner, here, namespace) : customTool(inner, here, namespace);
          add(here, chatTool, { kind: inner.type, name: inner.name as string, namespace });
        });
        return;
      }
      switch (tool.type) {
        case 'function':
          add(at, functionTool(tool, at, null), { kind: 'function', name: tool.name as string, namespace: null });
          return;
        case 'custom':
          add(at, customTool(tool, at, null), { kind: 'custom', name: tool.name as string, namespace: null });
          return;
        case 'local_shell':
          add(at, localShellTool(), { kind: 'local_shell', name: 'local_shell', namespace: null });
          return;
        case 'tool_search':
          if (tool.execution !== 'client') throw invalid(`${at}.execution`, 'Only a client-executed tool_search (execution: "client") is supported: svc holds no tools to search.');
          add(at, toolSearchTool(tool, at), { kind: 'tool_search', name: 'tool_search', namespace: null });
          return;
        default:
          throw invalid(
            `${at}.type`,
            `${JSON.stringify(tool.type)} is a hosted tool svc cannot run. Tools svc takes: function, namespace, custom, local_shell, tool_search (execution: "client"), and web_search (svc runs the search).`,
          );
      }
    });
  }
  return planned;
}

/** A function tool `{name, description, parameters, strict}` as a chat tool. */
function functionTool(tool: Record<string, unknown>, at: string, namespace: string | null) {
  if (typeof tool.name !== 'string' || tool.name.length === 0) throw invalid(`${at}.name`, 'A function tool needs a name.');
  const { type: _type, name, defer_loading: _defer, allowed_callers: _callers, output_schema: _output, ...rest } = tool;
  return { type: 'function' as const, function: { ...rest, name: chatFunctionName(name as string, namespace) } };
}

/** A free-form tool: one string parameter, `input`, with the grammar it follows (if any) in the description. */
function customTool(tool: Record<string, unknown>, at: string, namespace: string | null) {
  if (typeof tool.name !== 'string' || tool.name.length === 0) throw invalid(`${at}.name`, 'A custom tool needs a name.');
  const format = isObject(tool.format) ? tool.format : null;
  const grammar = format?.type === 'grammar' && typeof format.definition === 'string' ? `\n\nThe input follows this ${typeof format.syntax === 'string' ? format.syntax : ''} grammar:\n${format.definition}` : '';
  const own = typeof tool.description === 'string' ? tool.description : '';
  const description = `${own}${own ? '\n\n' : ''}A free-form tool: put its whole input (plain text, not JSON) in the string input.${grammar}`;
  const parameters = { type: 'object', properties: { input: { type: 'string', description: 'The tool input, as plain text.' } }, required: ['input'], additionalProperties: false };
  return { type: 'function' as const, function: { name: chatFunctionName(tool.name, namespace), description, parameters } };
}

function localShellTool() {
  return {
    type: 'function' as const,
    function: {
      name: 'local_shell',
      description: "Run a command on the user's machine (the client runs it and returns its output).",
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'array', items: { type: 'string' }, description: 'The program and its arguments, e.g. ["ls", "-la"].' },
          working_directory: { type: 'string', description: 'Where to run it.' },
          timeout_ms: { type: 'integer', description: 'How long it may run, in milliseconds.' },
          env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Environment variables to set.' },
        },
        required: ['command'],
      },
    },
  };
}

function toolSearchTool(tool: Record<string, unknown>, at: string) {
  if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters)) throw invalid(`${at}.parameters`, 'parameters must be a JSON Schema object.');
  const parameters = isObject(tool.parameters) ? tool.parameters : { type: 'object', properties: { query: { type: 'string', description: 'What the tool you need does.' } }, required: ['query'] };
  const description = typeof tool.description === 'string' && tool.description.length > 0 ? tool.description : 'Find more tools by what they do; the ones found become callable.';
  return { type: 'function' as const, function: { name: 'tool_search', description, parameters } };
}

/** `filters.allowed_domains` of a web_search tool (hosts, or URLs whose host is meant), or null. */
function allowedDomains(filters: unknown, at: string) {
  if (filters === undefined || filters === null) return null;
  if (!isObject(filters)) throw invalid(at, 'filters must be an object such as {allowed_domains: ["example.com"]}.');
  const allowed = filters.allowed_domains;
  if (allowed === undefined || allowed === null) return null;
  return { allowed: domainList(allowed, `${at}.allowed_domains`), blocked: [] };
}

/** `tool_choice` as chat's, for the chat names of the request's tools. */
export function chatToolChoice(choice: unknown, tools: PlannedTools): unknown {
  if (choice === null || choice === undefined || choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (!isObject(choice)) throw invalid('tool_choice', 'tool_choice must be auto, none, required or an object naming a tool.');
  const named = (name: string) => {
    if (!tools.names.has(name) && !(name === hostedSearchFunction && tools.search)) throw invalid('tool_choice', `tool_choice names ${JSON.stringify(name)}, which is not one of the tools.`);
    return { type: 'function', function: { name } };
  };
  if ((choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') {
    return named(chatFunctionName(choice.name, typeof choice.namespace === 'string' ? choice.namespace : null));
  }
  if (typeof choice.type === 'string' && webSearchTypes.has(choice.type)) return named(hostedSearchFunction);
  if (choice.type === 'local_shell') return named('local_shell');
  throw invalid('tool_choice.type', 'tool_choice must be auto, none, required, {type: "function" | "custom", name} or {type: "web_search"}.');
}

/**
 * The output items of a Responses reply: the assistant's `message` (its text with `url_citation`
 * annotations for the search results it cites), a chat tool call as the item its tool's kind returns
 * (`responses.tools.ts`), and a `web_search_call` per search svc ran. And back: the items as the chat
 * assistant turn a later request (`previous_response_id`) continues from.
 */
import { randomHex } from '../../infra/request-id.ts';
import type { ChatMessage } from './chat.validate.ts';
import type { ToolCall } from './framing.ts';
import { citationsIn, type SearchRound } from './hosted-search.ts';
import { chatFunctionName, type ToolNames } from './responses.tools.ts';

/** `resp_`, `msg_`, `fc_`, … + 192 random bits, as OpenAI's ids look. */
export function responsesId(prefix: 'resp' | 'msg' | 'fc' | 'ctc' | 'lsh' | 'tsc' | 'ws'): string {
  return `${prefix}_${randomHex(48)}`;
}

export type UrlCitation = { type: 'url_citation'; url: string; title: string; start_index: number; end_index: number };
export type OutputText = { type: 'output_text'; text: string; annotations: UrlCitation[]; logprobs: never[] };
export type Refusal = { type: 'refusal'; refusal: string };
type Status = 'in_progress' | 'completed';
export type MessageItem = { type: 'message'; id: string; status: Status; role: 'assistant'; content: (OutputText | Refusal)[] };
export type FunctionCallItem = { type: 'function_call'; id: string; call_id: string; name: string; namespace?: string; arguments: string; status: Status };
export type CustomToolCallItem = { type: 'custom_tool_call'; id: string; call_id: string; name: string; namespace?: string; input: string; status: Status };
export type LocalShellCallItem = {
  type: 'local_shell_call';
  id: string;
  call_id: string;
  status: Status;
  action: { type: 'exec'; command: string[]; env: Record<string, string>; timeout_ms: number | null; user: string | null; working_directory: string | null };
};
export type ToolSearchCallItem = { type: 'tool_search_call'; id: string; call_id: string; arguments: unknown; execution: 'client'; status: Status };
export type WebSearchCallItem = { type: 'web_search_call'; id: string; status: 'completed' | 'failed'; action: { type: 'search'; query: string; sources: { type: 'url'; url: string }[] } };
export type ToolCallItem = FunctionCallItem | CustomToolCallItem | LocalShellCallItem | ToolSearchCallItem;
export type OutputItem = MessageItem | ToolCallItem | WebSearchCallItem;

export function outputText(text: string, searches: readonly SearchRound[] = []): OutputText {
  return { type: 'output_text', text, annotations: urlCitations(text, searches), logprobs: [] };
}

/** The `url_citation` annotations of a text for the search results it cites. */
export function urlCitations(text: string, searches: readonly SearchRound[]): UrlCitation[] {
  if (searches.length === 0) return [];
  return citationsIn(text, searches).map(({ start, end, result }) => ({ type: 'url_citation', url: result.url, title: result.title, start_index: start, end_index: end }));
}

/** One `web_search_call` per search: the query, and the sources it found. */
export function webSearchItems(searches: readonly SearchRound[]): WebSearchCallItem[] {
  return searches.map((round) => ({
    type: 'web_search_call',
    id: responsesId('ws'),
    status: round.result ? 'completed' : 'failed',
    action: { type: 'search', query: round.query, sources: (round.result?.results ?? []).map((result) => ({ type: 'url', url: result.url })) },
  }));
}

/** A chat tool call as the item of its tool's kind (`status` as given: a stream opens it in progress). */
export function toolCallItem(call: ToolCall, names: ToolNames, status: Status = 'completed'): ToolCallItem {
  const tool = names.get(call.function.name);
  const namespace = tool?.namespace ? { namespace: tool.namespace } : {};
  const args = call.function.arguments;
  switch (tool?.kind) {
    case 'custom':
      return { type: 'custom_tool_call', id: responsesId('ctc'), call_id: call.id, name: tool.name, ...namespace, input: customInput(args), status };
    case 'local_shell':
      return { type: 'local_shell_call', id: responsesId('lsh'), call_id: call.id, status, action: shellAction(args) };
    case 'tool_search':
      return { type: 'tool_search_call', id: responsesId('tsc'), call_id: call.id, arguments: parsedObject(args), execution: 'client', status };
    default:
      return { type: 'function_call', id: responsesId('fc'), call_id: call.id, name: tool?.name ?? call.function.name, ...namespace, arguments: args, status };
  }
}

/** A custom tool's input: the `input` string the model put in its arguments (or the arguments, if it sent plain text). */
function customInput(args: string): string {
  const parsed = parsedObject(args);
  return typeof parsed.input === 'string' ? parsed.input : args;
}

function parsedObject(args: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(args) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function shellAction(args: string): LocalShellCallItem['action'] {
  const parsed = parsedObject(args);
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((part): part is string => typeof part === 'string') : typeof value === 'string' ? [value] : []);
  const env = typeof parsed.env === 'object' && parsed.env !== null ? Object.fromEntries(Object.entries(parsed.env).filter(([, value]) => typeof value === 'string')) : {};
  return {
    type: 'exec',
    command: strings(parsed.command),
    env: env as Record<string, string>,
    timeout_ms: typeof parsed.timeout_ms === 'number' ? parsed.timeout_ms : null,
    user: typeof parsed.user === 'string' ? parsed.user : null,
    working_directory: typeof parsed.working_directory === 'string' ? parsed.working_directory : null,
  };
}

/** A tool call item as the chat tool call it answers in a later turn. */
function chatCallOf(item: ToolCallItem): ToolCall {
  const fn = (name: string, args: string): ToolCall => ({ id: item.call_id, type: 'function', function: { name, arguments: args } });
  switch (item.type) {
    case 'function_call':
      return fn(chatFunctionName(item.name, item.namespace), item.arguments);
    case 'custom_tool_call':
      return fn(chatFunctionName(item.name, item.namespace), JSON.stringify({ input: item.input }));
    case 'local_shell_call': {
      const { type: _type, ...action } = item.action;
      return fn('local_shell', JSON.stringify(action));
    }
    case 'tool_search_call':
      return fn('tool_search', JSON.stringify(item.arguments));
  }
}

/** The assistant turn of some output items, as the chat message an upstream would be sent next time. */
export function asChatMessage(output: readonly OutputItem[]): ChatMessage | null {
  const text = output.flatMap((item) => (item.type === 'message' ? item.content : [])).map((part) => (part.type === 'output_text' ? part.text : part.refusal));
  const calls = output.filter((item): item is ToolCallItem => item.type !== 'message' && item.type !== 'web_search_call').map(chatCallOf);
  if (text.length === 0 && calls.length === 0) return null;
  return { role: 'assistant', content: text.length > 0 ? text.join('') : null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

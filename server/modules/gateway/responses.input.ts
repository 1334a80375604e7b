/**
 * A Responses request's `input` read into chat messages, and into the input items a response keeps
 * (`GET /v1/responses/{id}/input_items`). A tool call the client sends back — `function_call`,
 * `custom_tool_call`, `local_shell_call`, `tool_search_call` — joins the assistant turn before it as a chat
 * tool call (named as `responses.tools.ts` named it for the model), and its output follows as a `tool`
 * message. Items that carry nothing a chat model can take are skipped: `reasoning` (svc returns none),
 * `web_search_call` (its results are not in the item; the cited answer after it is), and `additional_tools`
 * (its tools join the request's tools: `toolSources`).
 */
import { AppError } from '../../errors/app-error.ts';
import { randomHex } from '../../infra/request-id.ts';
import type { ChatMessage } from './chat.validate.ts';
import type { ToolCall } from './framing.ts';
import { chatFunctionName, type ToolSource } from './responses.tools.ts';

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Ids of the `item_reference` items of `input` (earlier replies the client did not send again). */
export function referencedItems(input: unknown): string[] {
  if (!Array.isArray(input)) return [];
  const ids: string[] = [];
  input.forEach((item: unknown, i) => {
    if (!isObject(item) || item.type !== 'item_reference') return;
    if (typeof item.id !== 'string' || item.id.length === 0 || item.id.length > 128) throw invalid(`input[${i}].id`, 'An item_reference needs the id of an item this API returned.');
    ids.push(item.id);
  });
  return ids;
}

/** Tools that input items add: `additional_tools` (Codex sends its tools so) and a client tool search's results. */
export function toolSources(input: unknown): ToolSource[] {
  if (!Array.isArray(input)) return [];
  const sources: ToolSource[] = [];
  input.forEach((item: unknown, i) => {
    if (isObject(item) && (item.type === 'additional_tools' || item.type === 'tool_search_output')) sources.push({ at: `input[${i}].tools`, tools: item.tools ?? [] });
  });
  return sources;
}

/** The input items as chat messages: a tool call joins the assistant turn before it, as chat has it. */
export function inputMessages(input: unknown, items: Map<string, ChatMessage>): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw invalid('input', 'input must be a string or an array of input items.');
  const messages: ChatMessage[] = [];
  const call = (id: unknown, name: string, args: string, at: string) => {
    if (typeof id !== 'string' || id.length === 0) throw invalid(`${at}.call_id`, 'A tool call item needs its call_id.');
    let turn = messages.at(-1);
    if (turn?.role !== 'assistant') {
      turn = { role: 'assistant', content: null };
      messages.push(turn);
    }
    ((turn.tool_calls ??= []) as ToolCall[]).push({ id, type: 'function', function: { name, arguments: args } });
  };
  const output = (id: unknown, value: unknown, at: string) => {
    if (typeof id !== 'string' || id.length === 0) throw invalid(`${at}.call_id`, 'A tool output item needs the call_id it answers.');
    const content = typeof value === 'string' ? value : Array.isArray(value) ? messageContent(value, `${at}.output`, false) : JSON.stringify(value ?? '');
    messages.push({ role: 'tool', tool_call_id: id, content });
  };
  input.forEach((item: unknown, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw invalid(at, 'Each input item must be an object.');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const role = item.role;
        if (role !== 'user' && role !== 'system' && role !== 'developer' && role !== 'assistant') throw invalid(`${at}.role`, 'role must be user, system, developer or assistant.');
        const content = messageContent(item.content, `${at}.content`, role === 'assistant');
        if (role === 'assistant') {
          const text = typeof content === 'string' ? content : (content as { text?: string }[]).map((part) => part.text ?? '').join('');
          messages.push({ role, content: text });
        } else messages.push({ role, content });
        return;
      }
      case 'function_call':
        if (typeof item.name !== 'string' || typeof item.arguments !== 'string') throw invalid(at, 'A function_call item needs call_id, name and arguments (a JSON string).');
        return call(item.call_id, chatFunctionName(item.name, namespaceOf(item)), item.arguments, at);
      case 'custom_tool_call':
        if (typeof item.name !== 'string' || typeof item.input !== 'string') throw invalid(at, 'A custom_tool_call item needs call_id, name and input (a string).');
        return call(item.call_id, chatFunctionName(item.name, namespaceOf(item)), JSON.stringify({ input: item.input }), at);
      case 'local_shell_call': {
        if (!isObject(item.action)) throw invalid(`${at}.action`, 'A local_shell_call item needs its action.');
        const { type: _type, ...action } = item.action;
        return call(item.call_id ?? item.id, 'local_shell', JSON.stringify(action), at);
      }
      case 'tool_search_call':
        return call(item.call_id, 'tool_search', typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}), at);
      case 'function_call_output':
      case 'custom_tool_call_output':
        return output(item.call_id, item.output, at);
      case 'local_shell_call_output':
        return output(item.call_id ?? item.id, item.output, at);
      case 'tool_search_output':
        return output(item.call_id, `Tools found: ${toolNames(item.tools)}. They can be called now.`, at);
      case 'item_reference': {
        const stored = items.get(item.id as string);
        if (!stored) {
          throw invalid(`${at}.id`, `Item with id ${JSON.stringify(item.id)} not found: items are kept for a limited time and only when store was not false; send its content instead.`);
        }
        const last = messages.at(-1);
        // A referenced reply followed by the calls it made is one assistant turn, as it was produced.
        if (last?.role === 'assistant' && last.content === null && stored.content !== null) last.content = stored.content;
        else messages.push({ ...stored });
        return;
      }
      case 'reasoning':
      case 'web_search_call':
      case 'additional_tools':
        return;
      default:
        throw invalid(
          `${at}.type`,
          `Input items of type ${JSON.stringify(type)} are not supported: use message, the calls svc's tools return (function_call, custom_tool_call, local_shell_call, tool_search_call) and their outputs, or item_reference.`,
        );
    }
  });
  return messages;
}

function namespaceOf(item: Record<string, unknown>): string | null {
  return typeof item.namespace === 'string' && item.namespace.length > 0 ? item.namespace : null;
}

function toolNames(tools: unknown): string {
  if (!Array.isArray(tools)) return 'none';
  const names = tools.flatMap((tool: unknown) => {
    if (!isObject(tool)) return [];
    if (tool.type === 'namespace' && Array.isArray(tool.tools)) return tool.tools.map((inner: unknown) => (isObject(inner) ? chatFunctionName(String(inner.name), String(tool.name)) : ''));
    return typeof tool.name === 'string' ? [tool.name] : [];
  });
  return names.filter(Boolean).join(', ') || 'none';
}

/** Responses content parts as chat content: a single text part becomes a plain string, as most upstreams like best. */
function messageContent(content: unknown, at: string, assistant: boolean): string | unknown[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(at, 'content must be a string or an array of content parts.');
  const parts = content.map((part: unknown, j) => {
    const here = `${at}[${j}]`;
    if (!isObject(part)) throw invalid(here, 'Each content part must be an object with a type.');
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        if (typeof part.text !== 'string') throw invalid(`${here}.text`, 'A text part needs text (a string).');
        return { type: 'text', text: part.text };
      case 'refusal':
        if (!assistant || typeof part.refusal !== 'string') throw invalid(`${here}.type`, 'refusal parts belong to assistant messages.');
        return { type: 'text', text: part.refusal };
      case 'input_image': {
        if (typeof part.image_url !== 'string') throw invalid(`${here}.image_url`, 'An input_image part needs image_url (a URL or data URL); file_id is not supported.');
        return { type: 'image_url', image_url: { url: part.image_url, ...(typeof part.detail === 'string' ? { detail: part.detail } : {}) } };
      }
      case 'input_file': {
        if (typeof part.file_data !== 'string') throw invalid(`${here}.file_data`, 'An input_file part needs file_data (a data URL); file_id and file_url are not supported.');
        return { type: 'file', file: { file_data: part.file_data, ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) } };
      }
      case 'input_audio':
        return { type: 'input_audio', input_audio: part.input_audio };
      default:
        throw invalid(`${here}.type`, 'type must be input_text, input_image, input_file, input_audio or output_text.');
    }
  });
  if (parts.length === 1 && parts[0]!.type === 'text') return (parts[0] as { text: string }).text;
  return parts;
}

/** Id prefixes of the input items svc lists, as OpenAI's look. */
const itemPrefixes: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
  local_shell_call: 'lsh',
  local_shell_call_output: 'lsho',
  tool_search_call: 'tsc',
  tool_search_output: 'tso',
  web_search_call: 'ws',
  additional_tools: 'at',
  reasoning: 'rs',
};

/**
 * The input as the list of items `input_items` returns: a string becomes a user message, a message's string
 * content an `input_text` part (`output_text` for the assistant's), and every item has an id (its own, or one
 * made up as OpenAI's look).
 */
export function inputItemList(input: unknown): Record<string, unknown>[] {
  const items = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? (input as unknown[]) : [];
  return items.filter(isObject).map((item) => {
    const type = typeof item.type === 'string' ? item.type : 'message';
    const listed: Record<string, unknown> = { ...item, type };
    if (type === 'message') {
      if (typeof item.content === 'string') listed.content = [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }];
      listed.status ??= 'completed';
    }
    // From the pooled random hex, as `responsesId`: `randomBytes` a call was ~40 µs of a request (issue 48).
    if (typeof listed.id !== 'string' || listed.id.length === 0) listed.id = `${itemPrefixes[type] ?? 'item'}_${randomHex(48)}`;
    return listed;
  });
}

/**
 * An Anthropic Messages request read into the parts of a chat request (`messages.surface.ts` puts them
 * together): `system` and the conversation as chat messages, client tools, `tool_choice`, and `thinking`.
 *
 * Content blocks: text as text parts; images (base64 or URL) as `image_url` parts; PDF documents as `file`
 * parts and text documents and search results as text; an assistant's `tool_use` blocks as `tool_calls`
 * (input as its JSON string) and a user's `tool_result` blocks as `tool` messages, placed before the rest
 * of that user turn (images a tool returned follow in the user message: chat tool messages carry text
 * only). Thinking blocks sent back are dropped: a chat upstream cannot take them. Prompt-cache marks
 * (`cache_control`) and citations are accepted and have no effect. An earlier turn's web search (its
 * `server_tool_use` and `web_search_tool_result` blocks) stays as a line of its sources; a `tool_reference`
 * (Claude Code's ToolSearch) as a line naming the tool. What svc cannot do — other server tools, the Files
 * API, documents by URL — is refused by name.
 */
import { AppError } from '../../errors/app-error.ts';
import { isObject, type ChatMessage } from './chat.validate.ts';
import { domainList, hostedSearchChatTool, hostedSearchFunction, maxSearchesPerTurn, type HostedSearchTool } from './hosted-search.ts';

type ChatPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } } | { type: 'file'; file: { file_data: string; filename: string } };

export function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

/** `system`: a string, or text blocks joined by blank lines; null when absent. */
export function systemText(system: unknown, at = 'system'): string | null {
  if (system === undefined || system === null) return null;
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) throw invalid(at, `${at} must be a string or an array of text blocks.`);
  return system.map((block: unknown, i) => textOf(block, `${at}[${i}]`)).join('\n\n');
}

/** The conversation as chat messages (without `system`, which the caller puts first). */
export function chatMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', 'messages must be a non-empty array.');
  const out: ChatMessage[] = [];
  messages.forEach((message: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) throw invalid(at, 'Each message must be an object with role and content.');
    switch (message.role) {
      case 'user':
        userTurn(message.content, `${at}.content`, out);
        return;
      case 'assistant':
        out.push(assistantTurn(message.content, `${at}.content`));
        return;
      case 'system':
        out.push({ role: 'system', content: systemText(message.content, `${at}.content`) ?? '' });
        return;
      default:
        throw invalid(`${at}.role`, 'role must be user, assistant or system.');
    }
  });
  return out;
}

function userTurn(content: unknown, at: string, out: ChatMessage[]): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  if (!Array.isArray(content)) throw invalid(at, 'content must be a string or an array of content blocks.');
  const parts: ChatPart[] = [];
  content.forEach((block: unknown, j) => {
    const here = `${at}[${j}]`;
    if (!isObject(block)) throw invalid(here, 'Each content block must be an object with a type.');
    if (block.type === 'tool_result') {
      const { message, images } = toolResult(block, here);
      out.push(message);
      parts.push(...images);
    } else parts.push(...contentParts(block, here));
  });
  const only = parts.length === 1 ? parts[0]! : null;
  if (parts.length > 0) out.push({ role: 'user', content: only?.type === 'text' ? only.text : parts });
}

/** A block of a user turn (or of a tool result, or a document's content) as chat content parts. */
function contentParts(block: Record<string, unknown>, at: string): ChatPart[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: textOf(block, at) }];
    case 'image':
      return [imagePart(block.source, `${at}.source`)];
    case 'document':
      return documentParts(block, at);
    case 'search_result':
      return [{ type: 'text', text: searchResultText(block, at) }];
    case 'tool_reference':
      // Claude Code's ToolSearch answers with the tools it loaded; the client sends them in `tools` from then on.
      if (typeof block.tool_name !== 'string') throw invalid(`${at}.tool_name`, 'A tool_reference block needs tool_name.');
      return [{ type: 'text', text: `Tool loaded: ${block.tool_name}.` }];
    case 'thinking':
    case 'redacted_thinking':
      return [];
    default:
      throw invalid(`${at}.type`, `Content blocks of type ${JSON.stringify(block.type)} are not supported here: use text, image, document, search_result, tool_reference or tool_result.`);
  }
}

function textOf(block: unknown, at: string): string {
  if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') throw invalid(at, 'A text block is {type: "text", text}.');
  return block.text;
}

function imagePart(source: unknown, at: string): ChatPart {
  if (!isObject(source)) throw invalid(at, 'An image block needs a source.');
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || !source.media_type.startsWith('image/') || typeof source.data !== 'string') {
      throw invalid(at, 'A base64 image source needs media_type (image/…) and data.');
    }
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  throw invalid(`${at}.type`, 'Image sources are base64 or url here (the Files API is not supported).');
}

function documentParts(block: Record<string, unknown>, at: string): ChatPart[] {
  const source = block.source;
  const title = typeof block.title === 'string' ? block.title : null;
  if (!isObject(source)) throw invalid(`${at}.source`, 'A document block needs a source.');
  switch (source.type) {
    case 'base64':
      if (source.media_type !== 'application/pdf' || typeof source.data !== 'string') throw invalid(`${at}.source`, 'A base64 document is a PDF: media_type application/pdf and data.');
      return [{ type: 'file', file: { file_data: `data:application/pdf;base64,${source.data}`, filename: title ?? 'document.pdf' } }];
    case 'text':
      if (typeof source.data !== 'string') throw invalid(`${at}.source.data`, 'A text document needs data (a string).');
      return [{ type: 'text', text: title ? `${title}\n\n${source.data}` : source.data }];
    case 'content': {
      const content = source.content;
      if (typeof content === 'string') return [{ type: 'text', text: content }];
      if (!Array.isArray(content)) throw invalid(`${at}.source.content`, 'A content document needs content: a string or text and image blocks.');
      return content.flatMap((part: unknown, k) => blockParts(part, `${at}.source.content[${k}]`));
    }
    default:
      throw invalid(`${at}.source.type`, 'Document sources are base64 (PDF), text or content here; documents by URL and the Files API are not supported.');
  }
}

function blockParts(part: unknown, at: string): ChatPart[] {
  if (!isObject(part)) throw invalid(at, 'Each content block must be an object with a type.');
  return contentParts(part, at);
}

function searchResultText(block: Record<string, unknown>, at: string): string {
  const content = Array.isArray(block.content) ? block.content.map((part: unknown, k) => textOf(part, `${at}.content[${k}]`)).join('\n') : null;
  if (typeof block.source !== 'string' || typeof block.title !== 'string' || content === null) throw invalid(at, 'A search_result block needs source, title and text content.');
  return `${block.title}\n${block.source}\n\n${content}`;
}

/** A `tool_result` block as the chat `tool` message answering its call, and the images it carried. */
function toolResult(block: Record<string, unknown>, at: string): { message: ChatMessage; images: ChatPart[] } {
  const id = block.tool_use_id;
  if (typeof id !== 'string' || id.length === 0) throw invalid(`${at}.tool_use_id`, 'A tool_result block needs the tool_use_id it answers.');
  const texts: string[] = [];
  const images: ChatPart[] = [];
  const content = block.content;
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) {
    content.forEach((part: unknown, k) => {
      for (const piece of blockParts(part, `${at}.content[${k}]`)) {
        if (piece.type === 'text') texts.push(piece.text);
        else images.push(piece);
      }
    });
  } else if (content !== undefined && content !== null) throw invalid(`${at}.content`, 'A tool_result content is a string or an array of content blocks.');
  const text = texts.join('\n');
  const message: ChatMessage = { role: 'tool', tool_call_id: id, content: block.is_error === true ? `Error: ${text}` : text };
  if (images.length > 0) images.unshift({ type: 'text', text: `Images returned by the tool call ${id}:` });
  return { message, images };
}

/** A `web_search_tool_result`'s results as text: "Sources: title <url>; …" (an error result says so). */
function searchSources(content: unknown): string {
  if (!Array.isArray(content)) return '\n[The web search failed.]\n';
  const sources = content.filter(isObject).map((result) => `${typeof result.title === 'string' ? result.title : ''} <${typeof result.url === 'string' ? result.url : ''}>`);
  return `\n[Web search sources: ${sources.join('; ') || 'none'}]\n`;
}

function assistantTurn(content: unknown, at: string): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  if (!Array.isArray(content)) throw invalid(at, 'content must be a string or an array of content blocks.');
  let text = '';
  const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  content.forEach((block: unknown, j) => {
    const here = `${at}[${j}]`;
    if (!isObject(block)) throw invalid(here, 'Each content block must be an object with a type.');
    switch (block.type) {
      case 'text':
        text += textOf(block, here);
        return;
      case 'tool_use': {
        if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid(here, 'A tool_use block needs id and name.');
        const input = block.input ?? {};
        if (!isObject(input)) throw invalid(`${here}.input`, 'A tool_use input is an object.');
        calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(input) } });
        return;
      }
      case 'web_search_tool_result':
        // A search svc (or Anthropic) ran in an earlier turn: its sources stay in the conversation as text.
        text += searchSources(block.content);
        return;
      case 'server_tool_use':
      case 'thinking':
      case 'redacted_thinking':
        return;
      default:
        throw invalid(`${here}.type`, `Assistant content blocks of type ${JSON.stringify(block.type)} are not supported: svc returns text, tool_use, server_tool_use, web_search_tool_result and thinking blocks only.`);
    }
  });
  if (calls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text.length > 0 ? text : null, tool_calls: calls };
}

/** Anthropic's web search server tool, in each version (`web_search_20250305`, and the newer ones). */
const WEB_SEARCH = /^web_search_\d{8}$/;

/**
 * Client tools `{name, description, input_schema}` as chat function tools, and the web search server tool as
 * svc's hosted search (`hosted-search.ts`: its function joins the tools); other server tools are refused by
 * name.
 */
export function chatTools(tools: unknown, searchEnabled: boolean): { tools: unknown[] | undefined; search: HostedSearchTool | null } {
  if (tools === undefined || tools === null) return { tools: undefined, search: null };
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  let search: HostedSearchTool | null = null;
  const chat = tools.map((tool: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalid(at, 'Each tool must be an object with name and input_schema.');
    if (typeof tool.type === 'string' && WEB_SEARCH.test(tool.type)) {
      if (!searchEnabled) throw invalid(`${at}.type`, `${tool.type} is a server tool, and hosted search is off on this server (its model catalogue has no svc-2.1-search).`);
      if (search) throw invalid(at, 'Send the web search tool once.');
      search = webSearchTool(tool, at);
      return hostedSearchChatTool();
    }
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      throw invalid(`${at}.type`, `${JSON.stringify(tool.type)} is a server tool, which svc does not run (of Anthropic's server tools svc runs web search): define the tool with name, description and input_schema, and run it yourself.`);
    }
    if (typeof tool.name !== 'string' || tool.name.length === 0) throw invalid(`${at}.name`, 'A tool needs a name.');
    if (tool.name === hostedSearchFunction && tools.some((other: unknown) => isObject(other) && typeof other.type === 'string' && WEB_SEARCH.test(other.type))) {
      throw invalid(`${at}.name`, `A tool called ${hostedSearchFunction} and the web search server tool cannot be sent together.`);
    }
    if (!isObject(tool.input_schema)) throw invalid(`${at}.input_schema`, 'input_schema must be a JSON Schema object.');
    // `defer_loading` asks Anthropic to show the tool only once a tool search finds it; a chat upstream has no
    // such search, so the tool is shown at once (it stays callable, which is what the client needs).
    const fn: Record<string, unknown> = { name: tool.name, parameters: tool.input_schema };
    if (typeof tool.description === 'string') fn.description = tool.description;
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    return { type: 'function', function: fn };
  });
  return { tools: chat, search };
}

/** `max_uses` (at most svc's own bound), `allowed_domains` or `blocked_domains` of the web search tool. */
function webSearchTool(tool: Record<string, unknown>, at: string): HostedSearchTool {
  const uses = tool.max_uses;
  if (uses !== undefined && uses !== null && (typeof uses !== 'number' || !Number.isInteger(uses) || uses < 1)) throw invalid(`${at}.max_uses`, 'max_uses must be a positive integer.');
  const allowed = present(tool.allowed_domains) ? domainList(tool.allowed_domains, `${at}.allowed_domains`) : [];
  const blocked = present(tool.blocked_domains) ? domainList(tool.blocked_domains, `${at}.blocked_domains`) : [];
  if (allowed.length > 0 && blocked.length > 0) throw invalid(at, 'Send allowed_domains or blocked_domains, not both.');
  return { maxUses: Math.min(typeof uses === 'number' ? uses : maxSearchesPerTurn, maxSearchesPerTurn), domains: allowed.length + blocked.length > 0 ? { allowed, blocked } : null };
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** `tool_choice` as chat's `tool_choice` and `parallel_tool_calls`. */
export function chatToolChoice(choice: unknown): { tool_choice?: unknown; parallel_tool_calls?: boolean } {
  if (choice === undefined || choice === null) return {};
  if (!isObject(choice)) throw invalid('tool_choice', 'tool_choice must be {type: "auto" | "any" | "tool" | "none"}.');
  const parallel = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case 'auto':
      return { tool_choice: 'auto', ...parallel };
    case 'any':
      return { tool_choice: 'required', ...parallel };
    case 'none':
      return { tool_choice: 'none' };
    case 'tool':
      if (typeof choice.name !== 'string') throw invalid('tool_choice.name', 'tool_choice of type tool needs the tool name.');
      return { tool_choice: { type: 'function', function: { name: choice.name } }, ...parallel };
    default:
      throw invalid('tool_choice.type', 'tool_choice.type must be auto, any, tool or none.');
  }
}

/**
 * How `thinking` (and `output_config.effort`) reach a chat upstream: `chat_template_kwargs.enable_thinking`
 * and `reasoning_effort`, which svc's chat upstreams take. `enabled` turns thinking on (`budget_tokens` sets
 * the effort; it is not a cap an upstream enforces); `adaptive` (think when the task needs it) has no chat
 * equivalent, so thinking is on only when the client asks for high effort; `disabled` turns it off; any
 * other type is ignored. `note` says what was done, for the `x-svc-thinking` header; `show` whether the
 * reply carries the upstream's reasoning as thinking blocks.
 */
export function thinkingOf(thinking: unknown, effort: unknown): { fields: Record<string, unknown>; note: string | null; show: boolean } {
  if (thinking === undefined || thinking === null) return { fields: {}, note: null, show: false };
  if (!isObject(thinking) || typeof thinking.type !== 'string') throw invalid('thinking', 'thinking must be {type: "enabled", budget_tokens}, {type: "adaptive"} or {type: "disabled"}.');
  const off = { fields: { chat_template_kwargs: { enable_thinking: false } }, show: false };
  const on = (level: string, from: string) => ({
    fields: { chat_template_kwargs: { enable_thinking: true }, reasoning_effort: level },
    note: `enabled; reasoning_effort=${level}; from=${from}`,
    show: thinking.display !== 'omitted',
  });
  switch (thinking.type) {
    case 'disabled':
      return { ...off, note: 'disabled' };
    case 'enabled': {
      const budget = thinking.budget_tokens;
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1) throw invalid('thinking.budget_tokens', 'budget_tokens must be a positive integer.');
      return on(budget <= 4096 ? 'low' : budget <= 16_384 ? 'medium' : 'high', 'budget_tokens');
    }
    case 'adaptive':
    case 'between_tools':
      if (effort === 'high' || effort === 'xhigh' || effort === 'max') return on('high', 'effort');
      return { ...off, note: `disabled; from=${thinking.type}; effort=${typeof effort === 'string' ? effort : 'unset'}` };
    default:
      return { fields: {}, note: `ignored; type=${thinking.type.replace(/[^\w.-]/g, '')}`, show: false };
  }
}

/**
 * The hosted tools of svc's MCP server (DESIGN §8.4): today one, `web_search`, a metered search turn.
 * The MCP endpoint (`POST /v1/mcp`), the REST tool call (`POST /v1/mcp/tools/call`) and the discovery
 * document (`GET /v1/mcp`) all read the tool list and plan calls here, so the three never disagree.
 */
import type { Config } from '../../config/config.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { TurnPlan } from '../../metering/executor.ts';
import type { SearchCall, SearchExecutor, SearchFrame } from '../search/search.executor.ts';
import { svcSearchV1SchemaAt, type SvcSearchV1 } from '../search/search.output.ts';
import { maxQueryChars } from '../search/search.service.ts';

/** The MCP server's name: agents see its tools as `mcp__svc__<tool>`. */
export const mcpServerName = 'svc';
export const mcpPath = '/v1/mcp';
export const mcpToolsCallPath = '/v1/mcp/tools/call';
export const webSearchToolName = 'web_search';

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema: { type: 'object'; [key: string]: unknown };
  annotations: Record<string, unknown>;
}

export class McpTools {
  readonly #search: SearchExecutor;
  readonly #baseUrl: string;
  readonly #tools: ToolDefinition[];

  constructor(config: Config, search: SearchExecutor) {
    this.#search = search;
    this.#baseUrl = config.server.baseUrl;
    const maxResults = config.search.maxResults;
    this.#tools = [
      {
        name: webSearchToolName,
        title: 'Web search',
        description:
          'Searches the web (or the documents this server indexes) and returns ranked results as svc.search.v1 JSON: ' +
          'title, absolute URL, domain, a plain-text snippet, publication date and a 0–1 score per result. ' +
          'Each call is billed as one turn of svc-2.1-search.',
        inputSchema: {
          type: 'object',
          properties: {
            query: { type: 'string', minLength: 1, maxLength: maxQueryChars, description: 'What to search for, in plain words.' },
            maxResults: { type: 'integer', minimum: 1, maximum: maxResults, description: `How many results to return (default and most: ${maxResults}).` },
          },
          required: ['query'],
          additionalProperties: false,
        },
        outputSchema: svcSearchV1SchemaAt(this.#baseUrl) as unknown as ToolDefinition['outputSchema'],
        annotations: { title: 'Web search', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      },
    ];
  }

  list(): readonly ToolDefinition[] {
    return this.#tools;
  }

  /** `GET /v1/mcp`: the spec's discovery document. */
  discovery() {
    return {
      object: 'svc.mcp.server',
      name: mcpServerName,
      transport: { type: 'streamable-http', url: `${this.#baseUrl}${mcpPath}` },
      restToolsCall: `${this.#baseUrl}${mcpToolsCallPath}`,
      tools: this.#tools.map((tool) => ({
        name: tool.name,
        qualifiedName: `mcp__${mcpServerName}__${tool.name}`,
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
      })),
    };
  }

  has(name: string): boolean {
    return this.#tools.some((tool) => tool.name === name);
  }

  /**
   * Validates a call and names its turn. Throws 404 `tool_not_found` for a tool svc does not host and
   * 400 `invalid_request` naming the argument (`param` starts with `paramPrefix`, e.g. `arguments.`).
   */
  plan(name: unknown, args: unknown, frame: SearchFrame, paramPrefix = ''): TurnPlan<SearchCall, SvcSearchV1> {
    if (typeof name !== 'string' || name === '') throw new AppError('invalid_request', 'name must be the name of a tool, e.g. "web_search".', { param: 'name' });
    if (name !== webSearchToolName) {
      throw new AppError(
        'tool_not_found',
        bilingual('There is no tool named {name}. Tools on this server: {tools}.', '不存在名为 {name} 的工具。本服务器提供的工具：{tools}。', {
          name: JSON.stringify(name.slice(0, 100)),
          tools: this.#tools.map((tool) => tool.name).join(', '),
        }),
        { param: 'name' },
      );
    }
    return this.#search.planFromArguments(args ?? {}, frame, paramPrefix);
  }
}

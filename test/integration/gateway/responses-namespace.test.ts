/**
 * `namespace` tools on `POST /v1/responses`, as Codex sends each MCP server's tools (`{type: "namespace",
 * name: "mcp__svc", tools: [functions]}`) and its own groups (`multi_agent_v1`): the chat upstream sees one
 * function per tool named `<namespace>__<function>`, and a call to one comes back as a `function_call` with
 * `namespace` and `name` — non-streaming and streaming, in a follow-up's input, and across
 * `previous_response_id`. Before, any namespace tool was refused, so Codex could not use svc as its model
 * provider at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
});
afterAll(() => h?.close());

const searchParameters = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false };
const mcpNamespace = {
  type: 'namespace',
  name: 'mcp__svc',
  description: 'Tools of the svc MCP server.',
  tools: [{ type: 'function', name: 'web_search', description: 'Searches the web.', strict: false, parameters: searchParameters }],
};
const plainTool = { type: 'function', name: 'exec_command', description: 'Runs a command.', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } };
const callSearch = '#script {"toolCalls":[{"name":"mcp__svc__web_search","arguments":"{\\"query\\":\\"svc\\"}"}]}';

const post = (body: unknown) =>
  fetch(`${h.app.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('namespace tools', () => {
  it('are flattened for the upstream, and a call comes back with namespace and name', async () => {
    const reply = await post({ model: 'auto', input: callSearch, tools: [plainTool, mcpNamespace] });
    expect(reply.status).toBe(200);
    const response = (await reply.json()) as { id: string; output: unknown[] };
    expect(h.upstream.bodies.at(-1)!.tools).toEqual([
      { type: 'function', function: { name: 'exec_command', description: 'Runs a command.', strict: false, parameters: plainTool.parameters } },
      { type: 'function', function: { name: 'mcp__svc__web_search', description: 'Searches the web.', strict: false, parameters: searchParameters } },
    ]);
    expect(response.output).toEqual([
      { type: 'function_call', id: expect.stringMatching(/^fc_/), call_id: 'call_0_scripted', name: 'web_search', namespace: 'mcp__svc', arguments: '{"query":"svc"}', status: 'completed' },
    ]);

    // The follow-up names the call as the client got it; the upstream sees the flattened name again.
    const followUp = await post({
      model: 'auto',
      tools: [plainTool, mcpNamespace],
      input: [
        { role: 'user', content: 'Search for svc.' },
        { type: 'function_call', call_id: 'call_0_scripted', name: 'web_search', namespace: 'mcp__svc', arguments: '{"query":"svc"}' },
        { type: 'function_call_output', call_id: 'call_0_scripted', output: '{"results":[]}' },
      ],
    });
    expect(followUp.status).toBe(200);
    expect(h.upstream.bodies.at(-1)!.messages).toEqual([
      { role: 'user', content: 'Search for svc.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0_scripted', type: 'function', function: { name: 'mcp__svc__web_search', arguments: '{"query":"svc"}' } }] },
      { role: 'tool', tool_call_id: 'call_0_scripted', content: '{"results":[]}' },
    ]);

    // A stored reply's call is replayed to the upstream under the flattened name.
    await post({ model: 'auto', tools: [mcpNamespace], previous_response_id: response.id, input: [{ type: 'function_call_output', call_id: 'call_0_scripted', output: 'done' }] });
    expect((h.upstream.bodies.at(-1)!.messages as { tool_calls?: { function: { name: string } }[] }[])[1]!.tool_calls![0]!.function.name).toBe('mcp__svc__web_search');
  });

  it('stream: the function_call item carries namespace and name', async () => {
    const reply = await post({ model: 'auto', input: callSearch, tools: [mcpNamespace], stream: true });
    const text = await reply.text();
    const done = text
      .split('\n\n')
      .filter((block) => block.startsWith('event: response.output_item.done'))
      .map((block) => JSON.parse(block.split('\n')[1]!.slice(6)) as { item: Record<string, unknown> });
    expect(done.map((event) => event.item)).toEqual([expect.objectContaining({ type: 'function_call', name: 'web_search', namespace: 'mcp__svc', arguments: '{"query":"svc"}' })]);
  });

  it('refuses a namespace without tools, and two tools that end up with one name', async () => {
    const empty = await post({ model: 'auto', input: 'x', tools: [{ type: 'namespace', name: 'mcp__svc' }] });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: { param: 'tools[0].tools' } });
    const clash = await post({ model: 'auto', input: 'x', tools: [mcpNamespace, { ...plainTool, name: 'mcp__svc__web_search' }] });
    expect(clash.status).toBe(400);
    expect(await clash.json()).toMatchObject({ error: { param: 'tools[1]' } });
  });
});

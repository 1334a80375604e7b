/**
 * Every tool type a current Responses client sends, through the official SDK: what the chat upstream is
 * offered for each, the item each call comes back as (what Codex and the SDK parse), the same in a stream,
 * and the calls and outputs sent back in a later turn. A hosted tool svc cannot run is a 400 naming it.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
});
afterAll(() => h?.close());

type Tool = OpenAI.Responses.Tool;

const namespaceTool = {
  type: 'namespace',
  name: 'crm',
  description: 'Customer records.',
  tools: [
    { type: 'function', name: 'find_customer', description: 'Find a customer by email.', parameters: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] }, strict: false },
    { type: 'custom', name: 'note', description: 'Write a free-form note.' },
  ],
} as unknown as Tool;
const customTool: Tool = { type: 'custom', name: 'apply_patch', description: 'Apply a patch.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /.+/s' } };
const shellTool = { type: 'local_shell' } as Tool;
const toolSearch = { type: 'tool_search', execution: 'client', description: 'Find tools.', parameters: { type: 'object', properties: { goal: { type: 'string' } }, required: ['goal'] } } as unknown as Tool;

/** The scripted model calls `name` with these arguments. */
function calls(name: string, args: unknown): string {
  return `#script ${JSON.stringify({ toolCalls: [{ name, arguments: JSON.stringify(args) }] })}`;
}

function upstreamTools(): { function: { name: string; description?: string; parameters?: unknown } }[] {
  return h.upstream.bodies.at(-1)!.tools as never;
}

async function post(body: unknown): Promise<Response> {
  return fetch(`${h.app.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('tools of each type', () => {
  it('namespace: its tools are offered as <namespace>__<name>; a call comes back with its namespace', async () => {
    const response = await m.client.responses.create({ model: 'auto', input: calls('crm__find_customer', { email: 'ann@example.com' }), tools: [namespaceTool] });
    expect(upstreamTools().map((tool) => tool.function.name)).toEqual(['crm__find_customer', 'crm__note']);
    expect(upstreamTools()[0]!.function.description).toBe('Find a customer by email.');
    expect(response.output).toEqual([
      { type: 'function_call', id: expect.stringMatching(/^fc_/), call_id: 'call_0_scripted', name: 'find_customer', namespace: 'crm', arguments: '{"email":"ann@example.com"}', status: 'completed' },
    ]);
    const note = await m.client.responses.create({ model: 'auto', input: calls('crm__note', { input: 'Called back.' }), tools: [namespaceTool] });
    expect(note.output).toEqual([{ type: 'custom_tool_call', id: expect.stringMatching(/^ctc_/), call_id: 'call_0_scripted', name: 'note', namespace: 'crm', input: 'Called back.', status: 'completed' }]);
  });

  it('custom: a function with one string input (the grammar in its description); the call is a custom_tool_call with the free-form input', async () => {
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch';
    const response = await m.client.responses.create({ model: 'auto', input: calls('apply_patch', { input: patch }), tools: [customTool] });
    const [offered] = upstreamTools();
    expect(offered!.function).toMatchObject({ name: 'apply_patch', parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } });
    expect(offered!.function.description).toContain('start: "*** Begin Patch"');
    expect(response.output).toEqual([{ type: 'custom_tool_call', id: expect.stringMatching(/^ctc_/), call_id: 'call_0_scripted', name: 'apply_patch', input: patch, status: 'completed' }]);
  });

  it('local_shell: a function taking the command as an array; the call is a local_shell_call with an exec action', async () => {
    const response = await m.client.responses.create({ model: 'auto', input: calls('local_shell', { command: ['ls', '-la'], working_directory: '/tmp' }), tools: [shellTool] });
    expect(upstreamTools()[0]!.function).toMatchObject({ name: 'local_shell', parameters: { properties: { command: { type: 'array', items: { type: 'string' } } }, required: ['command'] } });
    expect(response.output).toEqual([
      {
        type: 'local_shell_call',
        id: expect.stringMatching(/^lsh_/),
        call_id: 'call_0_scripted',
        status: 'completed',
        action: { type: 'exec', command: ['ls', '-la'], env: {}, timeout_ms: null, user: null, working_directory: '/tmp' },
      },
    ]);
  });

  it('tool_search run by the client: its schema offered; the call is a tool_search_call; the tools it finds become callable', async () => {
    const response = await m.client.responses.create({ model: 'auto', input: calls('tool_search', { goal: 'send email' }), tools: [toolSearch] });
    expect(upstreamTools()[0]!.function).toMatchObject({ name: 'tool_search', description: 'Find tools.', parameters: { properties: { goal: { type: 'string' } } } });
    expect(response.output).toEqual([{ type: 'tool_search_call', id: expect.stringMatching(/^tsc_/), call_id: 'call_0_scripted', arguments: { goal: 'send email' }, execution: 'client', status: 'completed' }]);
    const found = { type: 'function', name: 'send_email', parameters: { type: 'object', properties: { to: { type: 'string' } } }, strict: false };
    const next = await post({
      model: 'auto',
      tools: [toolSearch],
      input: [
        { role: 'user', content: 'Email Ann.' },
        { type: 'tool_search_call', call_id: 'call_0_scripted', arguments: { goal: 'send email' }, execution: 'client', status: 'completed' },
        { type: 'tool_search_output', call_id: 'call_0_scripted', execution: 'client', tools: [found] },
      ],
    });
    expect(next.status).toBe(200);
    expect(upstreamTools().map((tool) => tool.function.name)).toEqual(['tool_search', 'send_email']);
    expect((h.upstream.bodies.at(-1)!.messages as unknown[]).slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0_scripted', type: 'function', function: { name: 'tool_search', arguments: '{"goal":"send email"}' } }] },
      { role: 'tool', tool_call_id: 'call_0_scripted', content: 'Tools found: send_email. They can be called now.' },
    ]);
  });

  it('tools in an additional_tools input item (how Codex sends them with its own models) are offered like tools', async () => {
    const reply = await post({ model: 'auto', input: [{ type: 'additional_tools', role: 'developer', tools: [namespaceTool, customTool] }, { role: 'user', content: 'hi' }] });
    expect(reply.status).toBe(200);
    expect(upstreamTools().map((tool) => tool.function.name)).toEqual(['crm__find_customer', 'crm__note', 'apply_patch']);
    expect(h.upstream.bodies.at(-1)!.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('sent back in the next turn, each call joins the assistant turn and each output answers it', async () => {
    await m.client.responses.create({
      model: 'auto',
      tools: [namespaceTool, customTool, shellTool],
      store: false,
      input: [
        { role: 'user', content: 'Do it all.' },
        { type: 'function_call', call_id: 'c1', name: 'find_customer', namespace: 'crm', arguments: '{"email":"a@b.c"}' } as OpenAI.Responses.ResponseInputItem,
        { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'local_shell_call', id: 'lsh_1', call_id: 'c3', status: 'completed', action: { type: 'exec', command: ['pwd'], env: {} } } as OpenAI.Responses.ResponseInputItem,
        { type: 'function_call_output', call_id: 'c1', output: 'Ann' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'patched' }] },
        { type: 'local_shell_call_output', id: 'c3', output: '/home/ann' },
      ],
    });
    expect(h.upstream.bodies.at(-1)!.messages).toEqual([
      { role: 'user', content: 'Do it all.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'crm__find_customer', arguments: '{"email":"a@b.c"}' } },
          { id: 'c2', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } },
          { id: 'c3', type: 'function', function: { name: 'local_shell', arguments: '{"command":["pwd"],"env":{}}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'Ann' },
      { role: 'tool', tool_call_id: 'c2', content: 'patched' },
      { role: 'tool', tool_call_id: 'c3', content: '/home/ann' },
    ]);
  });

  it('streamed: a custom tool call is one item with its input events; a namespaced function call streams its arguments', async () => {
    const stream = m.client.responses.stream({ model: 'auto', input: calls('crm__note', { input: 'A note.' }), tools: [namespaceTool] });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const final = await stream.finalResponse();
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(final.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'note', namespace: 'crm', input: 'A note.', status: 'completed' })]);

    const reply = await post({ model: 'auto', input: calls('crm__find_customer', { email: 'x@y.z' }), tools: [namespaceTool], stream: true });
    const events = (await reply.text())
      .trim()
      .split('\n\n')
      .map((block) => JSON.parse(block.split('\n')[1]!.slice(6)) as { type: string; item?: Record<string, unknown> });
    expect(events.find((event) => event.type === 'response.output_item.added')!.item).toMatchObject({ type: 'function_call', name: 'find_customer', namespace: 'crm', arguments: '' });
    expect(events.some((event) => event.type === 'response.function_call_arguments.delta')).toBe(true);
  });

  it('tool_choice names a namespaced or custom tool by its own name', async () => {
    await m.client.responses.create({ model: 'auto', input: 'hi', tools: [namespaceTool], tool_choice: { type: 'function', name: 'find_customer', namespace: 'crm' } as never });
    expect(h.upstream.bodies.at(-1)!.tool_choice).toEqual({ type: 'function', function: { name: 'crm__find_customer' } });
    await m.client.responses.create({ model: 'auto', input: 'hi', tools: [customTool], tool_choice: { type: 'custom', name: 'apply_patch' } });
    expect(h.upstream.bodies.at(-1)!.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
  });
});

describe('what svc cannot run', () => {
  it('a hosted tool svc cannot run is a 400 that names it; so are two tools of one name', async () => {
    const cases: [unknown[], string, string][] = [
      [[{ type: 'file_search', vector_store_ids: ['vs_1'] }], 'tools[0].type', '"file_search" is a hosted tool svc cannot run'],
      [[{ type: 'function', name: 'f', parameters: {} }, { type: 'code_interpreter', container: { type: 'auto' } }], 'tools[1].type', '"code_interpreter"'],
      [[{ type: 'image_generation' }], 'tools[0].type', '"image_generation"'],
      [[{ type: 'mcp', server_label: 'x', server_url: 'https://example.com/mcp' }], 'tools[0].type', '"mcp"'],
      [[{ type: 'computer_use_preview', display_width: 1, display_height: 1, environment: 'linux' }], 'tools[0].type', '"computer_use_preview"'],
      [[{ type: 'tool_search' }], 'tools[0].execution', 'client-executed'],
      [[{ type: 'namespace', name: 'n', tools: [{ type: 'web_search' }] }], 'tools[0].tools[0].type', 'function and custom'],
      [[{ type: 'function', name: 'web_search', parameters: {} }, { type: 'web_search' }], 'tools[1]', 'not both'],
      [[namespaceTool, { type: 'function', name: 'crm__note', parameters: {} }], 'tools[1]', 'unique'],
    ];
    for (const [tools, param, words] of cases) {
      const reply = await post({ model: 'auto', input: 'x', tools });
      expect(reply.status, JSON.stringify(tools)).toBe(400);
      const body = (await reply.json()) as { error: { param: string; message: string } };
      expect(body.error.param, JSON.stringify(tools)).toBe(param);
      expect(body.error.message).toContain(words);
    }
  });
});

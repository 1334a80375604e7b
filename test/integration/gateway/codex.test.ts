/**
 * Codex against svc, unchanged. Its real request bodies (captured from `codex exec` 0.171 pointed at a
 * recording server: `test/fixtures/agents/codex-*.json`) are answered as it expects — the namespace and
 * hosted web_search tools of its default tool set, its tool outputs sent back, a resumed session with a web
 * search in it, and its own default model's `additional_tools` with the namespaced custom `exec` tool. Then
 * the real CLI, run non-interactively with a fresh HOME and only an svc key (telemetry off), gets its answer,
 * runs a shell command the model asks for, and has svc search the web for it, with the ledger metering each
 * model call as a chat turn and each search as a search turn.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { svc, writeCorpus } from '../search/search-harness.ts';
import { ledgerRows, startHarness, type Harness, type LedgerRow, type Member } from './harness.ts';

const repo = resolve(import.meta.dirname, '../../..');
const fixture = (name: string) => JSON.parse(readFileSync(join(repo, 'test/fixtures/agents', name), 'utf8')) as { url: string; headers: Record<string, string>; body: Record<string, any> };

let h: Harness;
let m: Member;
let corpus: string;
const homes: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
  corpus = writeCorpus();
  const run = await svc(['search', 'ingest', corpus, '--base-url', 'https://docs.example.com'], { DATABASE_URL: (h.mode.config.database as { url: string }).url });
  expect(run.code, run.stderr).toBe(0);
});
afterAll(async () => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
  rmSync(corpus, { recursive: true, force: true });
  await h?.close();
});

interface Event {
  type: string;
  [key: string]: any;
}

async function replay(name: string, change: (body: Record<string, any>) => void = () => undefined): Promise<{ status: number; events: Event[]; upstream: Record<string, any> }> {
  const { url, headers, body } = fixture(name);
  change(body);
  const reply = await fetch(`${h.app.url}${url}`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${m.key}` }, body: JSON.stringify(body) });
  const text = await reply.text();
  expect(reply.status, text).toBe(200);
  const events = text
    .trim()
    .split('\n\n')
    .map((block) => JSON.parse(block.split('\n')[1]!.slice('data: '.length)) as Event);
  return { status: reply.status, events, upstream: h.upstream.bodies.at(-1)! };
}

function toolNames(upstream: Record<string, any>): string[] {
  return (upstream.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
}

describe("Codex's requests", () => {
  it('its first turn (function tools, the multi_agent_v1 namespace, hosted web_search) streams a reply', async () => {
    const { events, upstream } = await replay('codex-first-turn.json');
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed', output: [{ type: 'message', content: [{ text: 'Hello from the scripted upstream.' }] }] } });
    expect(toolNames(upstream)).toEqual([
      'exec_command',
      'write_stdin',
      'request_user_input',
      'view_image',
      'multi_agent_v1__close_agent',
      'multi_agent_v1__resume_agent',
      'multi_agent_v1__send_input',
      'multi_agent_v1__spawn_agent',
      'multi_agent_v1__wait_agent',
      'get_goal',
      'create_goal',
      'update_goal',
      'web_search',
    ]);
    expect(upstream).toMatchObject({ model: 'svc-2.1', stream: false, tool_choice: 'auto', parallel_tool_calls: true });
    // What only shapes OpenAI's own service stays with svc.
    for (const field of ['client_metadata', 'prompt_cache_key', 'include', 'store', 'reasoning']) expect(upstream, field).not.toHaveProperty(field);
    expect((upstream.messages as { role: string }[]).map((message) => message.role)).toEqual(['developer', 'developer', 'user', 'user']);
  });

  it('its turn after tool calls carries the calls (one namespaced) and their outputs', async () => {
    const { upstream } = await replay('codex-tool-output.json');
    expect(upstream.messages.slice(-4)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"echo hi-from-tool"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: expect.stringContaining('hi-from-tool') },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'multi_agent_v1__wait_agent', arguments: '{"targets":["nobody"],"timeout_ms":10}' } }] },
      { role: 'tool', tool_call_id: 'call_2', content: expect.stringContaining('invalid agent id') },
    ]);
  });

  it('a resumed session with a web search in it: the search item is skipped, the cited answer kept', async () => {
    const { upstream } = await replay('codex-web-search-resume.json');
    expect(upstream.messages.slice(-3)).toEqual([
      { role: 'user', content: 'search the web: how do I install svc?' },
      { role: 'assistant', content: 'Install it with npm ci: https://docs.example.com/guide/install.md [1]' },
      { role: 'user', content: 'and after installing?' },
    ]);
  });

  it("with Codex's own default model: the tools of its additional_tools item, and the namespaced custom exec tool's call and output", async () => {
    // That model is OpenAI's: the request is replayed with an svc model, as a config naming one sends it.
    const first = await replay('codex-default-model.json', (body) => (body.model = 'svc-2.1'));
    expect(toolNames(first.upstream)).toEqual([
      'functions__exec',
      'functions__wait',
      'functions__request_user_input',
      'functions__request_user_input_async',
      'functions__send_message_to_user_async',
      'clock__sleep',
      'collaboration__followup_task',
      'collaboration__interrupt_agent',
      'collaboration__list_agents',
      'collaboration__send_message',
      'collaboration__spawn_agent',
      'collaboration__wait_agent',
    ]);
    const next = await replay('codex-default-model-custom-tool.json', (body) => (body.model = 'svc-2.1'));
    const input = 'const r = await tools.exec_command({cmd: "echo hi-from-exec"});\ntext(r.output);';
    expect(next.upstream.messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'functions__exec', arguments: JSON.stringify({ input }) } }] },
      { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: expect.stringContaining('Script completed') }, { type: 'text', text: 'hi-from-exec\n' }] },
    ]);
  });

  it('a namespaced custom tool call comes back as the custom_tool_call Codex runs', async () => {
    h.upstream.setScript(() => ({ toolCalls: [{ name: 'functions__exec', arguments: JSON.stringify({ input: 'text("hi")' }) }] }));
    try {
      const { events } = await replay('codex-default-model.json', (body) => (body.model = 'svc-2.1'));
      expect(events.find((event) => event.type === 'response.output_item.done')!.item).toEqual({
        type: 'custom_tool_call',
        id: expect.stringMatching(/^ctc_/),
        call_id: 'call_0_scripted',
        name: 'exec',
        namespace: 'functions',
        input: 'text("hi")',
        status: 'completed',
      });
    } finally {
      h.upstream.setScript(null);
    }
  });
});

/** The README's config for Codex, pointed at this test's svc. */
function codexConfig(baseUrl: string): string {
  return `model = "svc-2.1"
model_provider = "svc"

[model_providers.svc]
name = "svc"
base_url = "${baseUrl}/v1"
env_key = "SVC_API_KEY"
wire_api = "responses"

[analytics]
enabled = false
`;
}

/** Runs the real `codex exec --json` against svc: a fresh HOME with only the config above, svc's key, nothing else. */
function runCodex(key: string, prompt: string): Promise<{ code: number | null; events: Event[]; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), 'svc-codex-home-'));
  homes.push(home);
  mkdirSync(join(home, '.codex'));
  mkdirSync(join(home, 'work'));
  writeFileSync(join(home, '.codex', 'config.toml'), codexConfig(h.app.url));
  const env = { PATH: `${join(repo, 'node_modules/.bin')}:/usr/bin:/bin`, HOME: home, SVC_API_KEY: key };
  return new Promise((done) => {
    const child = execFile(join(repo, 'node_modules/.bin/codex'), ['exec', '--json', '--skip-git-repo-check', prompt], { cwd: join(home, 'work'), env, timeout: 100_000 }, (error, stdout, stderr) => {
      const events = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Event);
      done({ code: error ? ((error as { code?: number }).code ?? null) : 0, events, stderr });
    });
    child.stdin?.end();
  });
}

function items(events: Event[], type: string): Record<string, any>[] {
  return events.filter((event) => event.type === 'item.completed' && event.item.type === type).map((event) => event.item as Record<string, any>);
}

async function rows(member: Member, count: number): Promise<LedgerRow[]> {
  const found = await ledgerRows(h.database, member.accountId, count);
  expect(found).toHaveLength(count);
  return found;
}

describe('the real Codex CLI', () => {
  it('`codex exec "say hi"` answers with the upstream text; one chat turn in the ledger', async () => {
    const member = await h.member({ planPackage: 'pro' });
    h.upstream.setScript(() => ({ content: 'Hi from svc!' }));
    try {
      const run = await runCodex(member.key, 'say hi');
      expect(run.code, run.stderr).toBe(0);
      expect(items(run.events, 'agent_message').map((item) => item.text)).toEqual(['Hi from svc!']);
      expect(run.events.find((event) => event.type === 'turn.completed')).toBeDefined();
    } finally {
      h.upstream.setScript(null);
    }
    const [row] = await rows(member, 1);
    expect(row).toMatchObject({ product: 'chat', model: 'svc-2.1', status: 'ok', stream: true, credential_kind: 'api_key' });
    expect(row!.input_tokens).toBeGreaterThan(1000);
  }, 120_000);

  it('runs the shell command the model asks for and sends its output back: two chat turns', async () => {
    const member = await h.member({ planPackage: 'pro' });
    h.upstream.setScript((body) => {
      const answered = (body.messages as { role: string }[]).some((message) => message.role === 'tool');
      return answered ? { content: 'The command said hi.' } : { toolCalls: [{ name: 'exec_command', arguments: JSON.stringify({ cmd: 'echo hi-from-codex' }) }] };
    });
    try {
      const run = await runCodex(member.key, 'run echo');
      expect(run.code, run.stderr).toBe(0);
      expect(items(run.events, 'command_execution')).toEqual([expect.objectContaining({ command: expect.stringContaining('echo hi-from-codex'), aggregated_output: expect.stringContaining('hi-from-codex'), exit_code: 0 })]);
      expect(items(run.events, 'agent_message').map((item) => item.text)).toEqual(['The command said hi.']);
      const toolMessage = (h.upstream.bodies.at(-1)!.messages as { role: string; content: string; tool_call_id?: string }[]).find((message) => message.role === 'tool');
      expect(toolMessage).toMatchObject({ tool_call_id: 'call_0_scripted', content: expect.stringContaining('hi-from-codex') });
    } finally {
      h.upstream.setScript(null);
    }
    expect((await rows(member, 2)).map((row) => [row.product, row.status])).toEqual([
      ['chat', 'ok'],
      ['chat', 'ok'],
    ]);
  }, 120_000);

  it('its web search is run by svc: Codex shows the search, the answer cites the result; a search turn in the ledger', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const url = 'https://docs.example.com/guide/install.md';
    h.upstream.setScript((body) => {
      const searched = (body.messages as { role: string }[]).some((message) => message.role === 'tool');
      return searched ? { content: `Install it with npm ci: ${url}` } : { toolCalls: [{ name: 'web_search', arguments: JSON.stringify({ query: 'install gateway' }) }] };
    });
    try {
      const run = await runCodex(member.key, 'search the web: how do I install svc?');
      expect(run.code, run.stderr).toBe(0);
      expect(items(run.events, 'web_search')).toEqual([expect.objectContaining({ query: 'install gateway' })]);
      expect(items(run.events, 'agent_message').map((item) => item.text)).toEqual([`Install it with npm ci: ${url}`]);
    } finally {
      h.upstream.setScript(null);
    }
    const found = await rows(member, 3);
    expect(found.map((row) => row.product).sort()).toEqual(['chat', 'chat', 'search']);
    expect(found.find((row) => row.product === 'search')).toMatchObject({ model: 'svc-2.1-search', unit: 'search', status: 'ok' });
  }, 120_000);
});

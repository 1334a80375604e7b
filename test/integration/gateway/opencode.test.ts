/**
 * opencode against svc, unchanged (issue 48 items 4 and 5). Its real request bodies (captured from
 * `opencode run` 1.18.33 through svc: `test/fixtures/agents/opencode-*.json`) are answered on the default
 * config: every turn streams and asks for max_tokens 32000 (served at the model's 8192, said in
 * `x-svc-max-tokens`), and its agent turns carry ten tools (the upstream is called without streaming, the
 * reply streamed back with its tool calls). Then the real CLI, run non-interactively with a fresh HOME and
 * XDG dirs, autoupdate, model fetches and sharing off, and only an svc key, answers "say hi" and runs a shell
 * command the model asks for — each model call one streamed chat turn in the ledger.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, startHarness, type Harness, type LedgerRow, type Member } from './harness.ts';

const repo = resolve(import.meta.dirname, '../../..');
const fixture = (name: string) => JSON.parse(readFileSync(join(repo, 'test/fixtures/agents', name), 'utf8')) as { url: string; headers: Record<string, string>; body: Record<string, any> };

let h: Harness;
let m: Member;
const homes: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
});
afterAll(async () => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
  await h?.close();
});

interface Chunk {
  choices: { delta: Record<string, any>; finish_reason: string | null }[];
  usage?: unknown;
}

/** Sends a captured request as opencode sent it (with this member's key): the reply's headers and chunks, and what the upstream got. */
async function replay(name: string): Promise<{ headers: Headers; chunks: Chunk[]; upstream: Record<string, any> }> {
  const { url, headers, body } = fixture(name);
  const reply = await fetch(`${h.app.url}${url}`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${m.key}` }, body: JSON.stringify(body) });
  const text = await reply.text();
  expect(reply.status, text).toBe(200);
  expect(reply.headers.get('content-type')).toContain('text/event-stream');
  const events = text.trim().split('\n\n');
  expect(events.at(-1)).toBe('data: [DONE]');
  return { headers: reply.headers, chunks: events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)) as Chunk), upstream: h.upstream.bodies.at(-1)! };
}

const opencodeTools = ['bash', 'edit', 'glob', 'grep', 'read', 'skill', 'task', 'todowrite', 'webfetch', 'write'];

describe("opencode's requests", () => {
  it('its title request (streamed, max_tokens 32000) streams a reply; the upstream is asked for the cap', async () => {
    const { headers, chunks, upstream } = await replay('opencode-title.json');
    expect(headers.get('x-svc-max-tokens')).toBe('8192');
    expect(upstream).toMatchObject({ model: 'svc-2.1', stream: true, max_tokens: 8192 });
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('tok '.repeat(8));
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 8 });
  });

  it('its first agent turn (ten tools, stream) is answered by a non-streaming upstream call, the tool call streamed back as the SDKs parse it', async () => {
    h.upstream.setScript(() => ({ toolCalls: [{ name: 'bash', arguments: '{"command":"ls","description":"List files"}' }] }));
    try {
      const { headers, chunks, upstream } = await replay('opencode-first-turn.json');
      expect(headers.get('x-svc-max-tokens')).toBe('8192');
      expect(upstream).toMatchObject({ model: 'svc-2.1', stream: false, max_tokens: 8192, tool_choice: 'auto' });
      expect(upstream).not.toHaveProperty('stream_options');
      expect((upstream.tools as { function: { name: string } }[]).map((tool) => tool.function.name)).toEqual(opencodeTools);
      const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta));
      expect(deltas.filter((delta) => 'role' in delta)).toHaveLength(1);
      expect(deltas.flatMap((delta) => delta.tool_calls ?? [])).toEqual([
        { index: 0, id: 'call_0_scripted', type: 'function', function: { name: 'bash', arguments: '' } },
        { index: 0, function: { arguments: '{"command":"ls","description":"List files"}' } },
      ]);
      expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 8 } });
    } finally {
      h.upstream.setScript(null);
    }
  });

  it('its turn after the tool ran carries the call (content "") and the command output', async () => {
    const { upstream } = await replay('opencode-tool-result.json');
    expect(upstream.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_0_scripted', type: 'function', function: { name: 'bash', arguments: '{"command":"echo hi-from-opencode","description":"Print a greeting"}' } }] },
      { role: 'tool', tool_call_id: 'call_0_scripted', content: 'hi-from-opencode\n' },
    ]);
  });
});

/** The README's opencode config, pointed at this test's svc: a custom OpenAI-compatible provider. */
function opencodeConfig(baseUrl: string, extra: Record<string, unknown> = {}, model: Record<string, unknown> = {}): string {
  return JSON.stringify(
    {
      $schema: 'https://opencode.ai/config.json',
      provider: {
        svc: {
          npm: '@ai-sdk/openai-compatible',
          name: 'svc',
          options: { baseURL: `${baseUrl}/v1`, apiKey: '{env:SVC_API_KEY}' },
          models: { 'svc-2.1': { name: 'svc 2.1', ...model }, 'svc-2.1-fast': { name: 'svc 2.1 Fast', ...model } },
        },
      },
      model: 'svc/svc-2.1',
      small_model: 'svc/svc-2.1-fast',
      autoupdate: false,
      share: 'disabled',
      ...extra,
    },
    null,
    2,
  );
}

interface Event {
  type: string;
  part: Record<string, any>;
}

/** Runs the real `opencode run --format json` against svc: a fresh HOME and XDG dirs with only the config above, svc's key, nothing else. */
function runOpencode(key: string, prompt: string, config: string): Promise<{ code: number | null; events: Event[]; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), 'svc-opencode-home-'));
  homes.push(home);
  mkdirSync(join(home, '.config', 'opencode'), { recursive: true });
  mkdirSync(join(home, 'work'));
  writeFileSync(join(home, '.config', 'opencode', 'opencode.json'), config);
  const env = {
    PATH: `${join(repo, 'node_modules/.bin')}:/usr/bin:/bin`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    SVC_API_KEY: key,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  };
  return new Promise((done) => {
    const child = execFile(join(repo, 'node_modules/opencode-linux-x64/bin/opencode'), ['run', '--format', 'json', prompt], { cwd: join(home, 'work'), env, timeout: 100_000 }, (error, stdout, stderr) => {
      const events = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Event);
      done({ code: error ? ((error as { code?: number }).code ?? null) : 0, events, stderr });
    });
    // `opencode run` reads a piped stdin as more of the message: it must end.
    child.stdin?.end();
  });
}

async function rows(member: Member, count: number): Promise<LedgerRow[]> {
  const found = await ledgerRows(h.database, member.accountId, count);
  expect(found).toHaveLength(count);
  return found;
}

const texts = (events: Event[]) => events.filter((event) => event.type === 'text').map((event) => event.part.text as string);

describe('the real opencode CLI', () => {
  it('`opencode run "say hi"` with the README config answers with the upstream text; its title and its answer are two streamed chat turns', async () => {
    const member = await h.member({ planPackage: 'pro' });
    h.upstream.setScript((body) => (Array.isArray(body.tools) ? { content: 'Hi from svc!' } : { content: 'Greeting' }));
    try {
      const run = await runOpencode(member.key, 'say hi', opencodeConfig(h.app.url));
      expect(run.code, run.stderr).toBe(0);
      expect(texts(run.events)).toEqual(['Hi from svc!']);
    } finally {
      h.upstream.setScript(null);
    }
    const found = await rows(member, 2);
    expect(found.map((row) => [row.product, row.model, row.stream, row.status, row.output_tokens])).toEqual([
      ['chat', expect.stringMatching(/^svc-2\.1(-fast)?$/), true, 'ok', 8],
      ['chat', expect.stringMatching(/^svc-2\.1(-fast)?$/), true, 'ok', 8],
    ]);
    expect(found.map((row) => row.model).sort()).toEqual(['svc-2.1', 'svc-2.1-fast']);
  }, 120_000);

  it('a tool-using turn: the model asks for bash, opencode runs it and sends the output back, and answers; three turns metered', async () => {
    const member = await h.member({ planPackage: 'pro' });
    h.upstream.setScript((body) => {
      const messages = body.messages as { role: string }[];
      if (!Array.isArray(body.tools)) return { content: 'Greeting' };
      if (messages.at(-1)?.role === 'tool') return { content: 'The command printed hi-from-opencode.' };
      return { toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'echo hi-from-opencode', description: 'Print a greeting' }) }] };
    });
    try {
      // With the models' limits stated, as the README suggests: opencode then asks for 8192 itself.
      const config = opencodeConfig(h.app.url, { permission: { bash: 'allow' } }, { limit: { context: 131_072, output: 8192 } });
      const run = await runOpencode(member.key, 'run echo hi-from-opencode in the shell', config);
      expect(run.code, run.stderr).toBe(0);
      const tool = run.events.find((event) => event.type === 'tool_use')!;
      expect(tool.part).toMatchObject({ tool: 'bash', callID: 'call_0_scripted', state: { status: 'completed', input: { command: 'echo hi-from-opencode' }, output: 'hi-from-opencode\n' } });
      expect(texts(run.events)).toEqual(['The command printed hi-from-opencode.']);
      const last = h.upstream.bodies.at(-1)!;
      expect(last).toMatchObject({ stream: false, max_tokens: 8192 });
      expect(last.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_0_scripted', content: 'hi-from-opencode\n' });
    } finally {
      h.upstream.setScript(null);
    }
    const found = await rows(member, 3);
    expect(found.every((row) => row.product === 'chat' && row.stream && row.status === 'ok' && !row.estimated)).toBe(true);
  }, 120_000);
});

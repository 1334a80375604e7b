/**
 * Claude Code against svc, unchanged: its real request bodies (captured from the `claude` CLI pointed at a
 * recording server: `test/fixtures/agents/claude-code-*.json`) are answered as it expects, and the real CLI,
 * run non-interactively with a fresh HOME and only an svc key, gets its answer — also through a tool call —
 * with the ledger metering each model call as a chat turn.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

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

async function replay(name: string): Promise<{ status: number; headers: Headers; events: { type: string; [key: string]: any }[]; upstream: Record<string, any> }> {
  const { url, headers, body } = fixture(name);
  const reply = await fetch(`${h.app.url}${url}`, { method: 'POST', headers: { ...headers, 'x-api-key': m.key }, body: JSON.stringify(body) });
  const text = await reply.text();
  const events = text
    .trim()
    .split('\n\n')
    .map((block) => JSON.parse(block.split('\n')[1]!.slice('data: '.length)) as { type: string });
  return { status: reply.status, headers: reply.headers, events, upstream: h.upstream.bodies.at(-1)! };
}

describe("Claude Code's requests", () => {
  it('its first turn (system blocks, a system message mid-conversation, twelve tools, adaptive thinking, 128k max_tokens) streams a reply', async () => {
    const { status, headers, events, upstream } = await replay('claude-code-first-turn.json');
    expect(status).toBe(200);
    expect(events.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events[3]).toMatchObject({ delta: { type: 'text_delta', text: 'Hello from the scripted upstream.' } });
    expect(headers.get('x-svc-max-tokens')).toBe('8192');
    expect(headers.get('x-svc-thinking')).toBe('disabled; from=adaptive; effort=medium');
    expect(headers.get('x-svc-ignored')).toBe('context_management');
    // Claude Code names its model claude-opus-…: svc's default alias.
    expect(upstream).toMatchObject({ model: 'svc-2.1-pro', stream: false, max_tokens: 8192, chat_template_kwargs: { enable_thinking: false } });
    const roles = (upstream.messages as { role: string }[]).map((message) => message.role);
    expect(roles).toEqual(['system', 'user', 'system']);
    expect(upstream.messages[0].content).toContain('You are a Claude agent');
    expect(upstream.tools).toHaveLength(12);
    expect(upstream.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain('Bash');
  });

  it('its turn after a tool call carries the tool_use and tool_result as tool_calls and a tool message', async () => {
    const { status, upstream } = await replay('claude-code-tool-result.json');
    expect(status).toBe(200);
    expect(upstream.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Running it.', tool_calls: [{ id: 'toolu_01abc', type: 'function', function: { name: 'Bash', arguments: '{"command":"echo hi-from-tool","description":"print"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_01abc', content: 'hi-from-tool' },
    ]);
  });
});

/** Runs the real `claude` CLI in print mode against svc: a fresh HOME and work directory, svc's key, nothing else. */
function runClaude(key: string, prompt: string, extra: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), 'svc-claude-home-'));
  homes.push(home);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ANTHROPIC_BASE_URL: h.app.url,
    ANTHROPIC_API_KEY: key,
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  return new Promise((done) => {
    const child = execFile(join(repo, 'node_modules/.bin/claude'), ['-p', prompt, '--output-format', 'json', ...extra], { cwd: home, env, timeout: 100_000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

describe('the real Claude Code CLI', () => {
  it('`claude -p "say hi"` answers with the upstream text; one chat turn in the ledger', async () => {
    const member = await h.member({ planPackage: 'pro' });
    h.upstream.setScript(() => ({ content: 'Hi from svc!' }));
    try {
      const run = await runClaude(member.key, 'say hi');
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout) as { is_error: boolean; result: string; stop_reason: string };
      expect(result).toMatchObject({ is_error: false, result: 'Hi from svc!', stop_reason: 'end_turn' });
    } finally {
      h.upstream.setScript(null);
    }
    const rows = await ledgerRows(h.database, member.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ product: 'chat', model: 'svc-2.1-pro', status: 'ok', stream: true, credential_kind: 'api_key' });
    expect(rows[0]!.input_tokens).toBeGreaterThan(1000);
  }, 120_000);

  it('runs a tool the model calls and sends its result back: two chat turns', async () => {
    const member = await h.member({ planPackage: 'pro' });
    h.upstream.setScript((body) => {
      const answered = (body.messages as { role: string }[]).some((message) => message.role === 'tool');
      return answered ? { content: 'The tool said hi.' } : { toolCalls: [{ name: 'Bash', arguments: JSON.stringify({ command: 'echo hi-from-tool', description: 'Print a greeting' }) }] };
    });
    try {
      const run = await runClaude(member.key, 'run echo', ['--allowedTools', 'Bash(echo *)']);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ is_error: false, result: 'The tool said hi.', num_turns: 2 });
      const followUp = h.upstream.bodies.at(-1)!.messages as { role: string; content: unknown }[];
      expect(followUp.find((message) => message.role === 'tool')).toMatchObject({ tool_call_id: 'call_0_scripted', content: expect.stringContaining('hi-from-tool') });
    } finally {
      h.upstream.setScript(null);
    }
    const rows = await ledgerRows(h.database, member.accountId, 2);
    expect(rows.map((row) => row.status)).toEqual(['ok', 'ok']);
  }, 120_000);
});

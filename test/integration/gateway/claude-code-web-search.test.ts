/**
 * Claude Code's WebSearch against svc. WebSearch is a deferred tool: the model loads it with ToolSearch
 * (whose result is a `tool_reference` block), then calls it, and Claude Code answers that call with a
 * request of its own offering Anthropic's `web_search_20250305` server tool — which svc runs with its own
 * search. Its real requests (`test/fixtures/agents/claude-code-{tool-search,web-search}.json`) are answered,
 * and the real CLI, run non-interactively with a fresh HOME and only an svc key, searches through svc: a
 * search turn in the ledger, and the result's URL in what WebSearch hands back to the model.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { svc, writeCorpus } from '../search/search-harness.ts';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

const repo = resolve(import.meta.dirname, '../../..');
const fixture = (name: string) => JSON.parse(readFileSync(join(repo, 'test/fixtures/agents', name), 'utf8')) as { url: string; headers: Record<string, string>; body: Record<string, any> };
const installUrl = 'https://docs.example.com/guide/install.md';

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

/**
 * The scripted model as Claude Code needs it: in WebSearch's own request it searches, then summarises; in
 * the main loop it loads WebSearch, calls it, then answers.
 */
function claudeSearching(): void {
  h.upstream.setScript((body) => {
    const tools = ((body.tools as { function: { name: string } }[] | undefined) ?? []).map((tool) => tool.function.name);
    const answered = (body.messages as { role: string }[]).filter((message) => message.role === 'tool').length;
    if (tools.includes('web_search')) {
      return answered === 0 ? { toolCalls: [{ name: 'web_search', arguments: JSON.stringify({ query: 'install gateway' }) }] } : { content: `Install with npm ci (${installUrl}).` };
    }
    // Distinct ids, as a model server gives them: Claude Code keeps track of its tool calls by id.
    if (answered === 0) return { toolCalls: [{ id: 'call_tool_search', name: 'ToolSearch', arguments: JSON.stringify({ query: 'select:WebSearch' }) }] };
    if (answered === 1) return { toolCalls: [{ id: 'call_web_search', name: 'WebSearch', arguments: JSON.stringify({ query: 'how to install svc' }) }] };
    return { content: `Run npm ci, then npm start. Source: ${installUrl}` };
  });
}

describe("Claude Code's requests", () => {
  it("WebSearch's own request (web_search_20250305, max_uses 8, 128k max_tokens) streams the search blocks and the cited summary", async () => {
    const { url, headers, body } = fixture('claude-code-web-search.json');
    claudeSearching();
    let text: string;
    try {
      const reply = await fetch(`${h.app.url}${url}`, { method: 'POST', headers: { ...headers, 'x-api-key': m.key }, body: JSON.stringify(body) });
      expect(reply.status).toBe(200);
      text = await reply.text();
    } finally {
      h.upstream.setScript(null);
    }
    const events = text
      .trim()
      .split('\n\n')
      .map((block) => JSON.parse(block.split('\n')[1]!.slice('data: '.length)) as { type: string; [key: string]: any });
    const starts = events.filter((event) => event.type === 'content_block_start').map((event) => event.content_block.type);
    expect(starts).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    const result = events.find((event) => event.type === 'content_block_start' && event.content_block.type === 'web_search_tool_result')!.content_block;
    expect(result.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'web_search_result', url: installUrl })]));
    expect(events.find((event) => event.delta?.type === 'citations_delta')!.delta.citation).toMatchObject({ type: 'web_search_result_location', url: installUrl });
    expect(events.find((event) => event.type === 'message_delta')!.usage).toMatchObject({ server_tool_use: { web_search_requests: 1 } });
  });

  it('the turn after ToolSearch loaded WebSearch (a tool_reference in a tool_result) is answered', async () => {
    const { url, headers, body } = fixture('claude-code-tool-search.json');
    const reply = await fetch(`${h.app.url}${url}`, { method: 'POST', headers: { ...headers, 'x-api-key': m.key }, body: JSON.stringify(body) });
    expect(reply.status).toBe(200);
    await reply.text();
    const messages = h.upstream.bodies.at(-1)!.messages as { role: string; content: unknown; tool_call_id?: string }[];
    expect(messages.find((message) => message.role === 'tool')).toMatchObject({ tool_call_id: 'toolu_ts1', content: 'Tool loaded: WebSearch.' });
  });
});

function runClaude(key: string, prompt: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
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
    const child = execFile(join(repo, 'node_modules/.bin/claude'), ['-p', prompt, '--output-format', 'json', '--allowedTools', 'WebSearch'], { cwd: home, env, timeout: 100_000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

describe('the real Claude Code CLI', () => {
  it('its WebSearch tool searches through svc: the result reaches the model, a search turn is metered', async () => {
    const member = await h.member({ planPackage: 'pro' });
    claudeSearching();
    try {
      const run = await runClaude(member.key, 'search the web: how do I install svc?');
      expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ is_error: false, result: `Run npm ci, then npm start. Source: ${installUrl}` });
      const toolResults = (h.upstream.bodies.at(-1)!.messages as { role: string; content: unknown }[]).filter((message) => message.role === 'tool');
      expect(String(toolResults.at(-1)!.content)).toContain(installUrl);
    } finally {
      h.upstream.setScript(null);
    }
    const rows = await ledgerRows(h.database, member.accountId, 6);
    expect(rows.map((row) => row.product).sort()).toEqual(['chat', 'chat', 'chat', 'chat', 'chat', 'search']);
    expect(rows.every((row) => row.status === 'ok')).toBe(true);
  }, 120_000);
});

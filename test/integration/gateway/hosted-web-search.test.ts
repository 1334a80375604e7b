/**
 * The hosted web search svc runs inside a model turn, on both surfaces that offer it: the Responses API's
 * `web_search` tool (openai SDK) and Anthropic's `web_search_20250305` server tool (@anthropic-ai/sdk). The
 * scripted model asks for a search; svc searches the embedded index (a corpus the `svc` command ingested),
 * feeds the results back and returns the cited answer: `web_search_call` items and `url_citation`
 * annotations, or `server_tool_use` + `web_search_tool_result` blocks and citations. Each search is a
 * metered `svc-2.1-search` turn in the ledger, each model call a chat turn; at most 3 searches a request.
 */
import Anthropic from '@anthropic-ai/sdk';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { svc, writeCorpus } from '../search/search-harness.ts';
import { ledgerRows, startHarness, type Harness, type LedgerRow, type Member } from './harness.ts';

let h: Harness;
let corpus: string;

const installUrl = 'https://docs.example.com/guide/install.md';
const answer = `Install it with npm ci, then npm start (see ${installUrl}).`;

beforeAll(async () => {
  h = await startHarness();
  corpus = writeCorpus();
  const run = await svc(['search', 'ingest', corpus, '--base-url', 'https://docs.example.com'], { DATABASE_URL: (h.mode.config.database as { url: string }).url });
  expect(run.code, run.stderr).toBe(0);
});
afterAll(async () => {
  rmSync(corpus, { recursive: true, force: true });
  await h?.close();
});

/** The scripted model: searches for each of `queries` while the tool is offered and it has not, then answers. */
function searchingModel(queries: string[], reply = answer): void {
  h.upstream.setScript((body) => {
    const searched = (body.messages as { role: string }[]).filter((message) => message.role === 'tool').length;
    const offered = ((body.tools as { function: { name: string } }[] | undefined) ?? []).some((tool) => tool.function.name === 'web_search');
    if (offered && searched < queries.length) return { toolCalls: [{ name: 'web_search', arguments: JSON.stringify({ query: queries[searched] }) }] };
    return { content: reply };
  });
}

async function rows(member: Member, count: number): Promise<LedgerRow[]> {
  const found = await ledgerRows(h.database, member.accountId, count);
  expect(found).toHaveLength(count);
  return found;
}

function byProduct(found: LedgerRow[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of found) counts[row.product] = (counts[row.product] ?? 0) + 1;
  return counts;
}

describe('Responses API: the hosted web_search tool', () => {
  it('runs the search the model asks for: a web_search_call item, the answer cited with url_citation, the search metered', async () => {
    const member = await h.member({ planPackage: 'pro' });
    searchingModel(['install gateway']);
    try {
      const response = await member.client.responses.create({ model: 'auto', input: 'How do I install svc?', tools: [{ type: 'web_search' }] });
      expect(response.status).toBe('completed');
      expect(response.output).toHaveLength(2);
      expect(response.output[0]).toEqual({
        type: 'web_search_call',
        id: expect.stringMatching(/^ws_/),
        status: 'completed',
        action: { type: 'search', query: 'install gateway', sources: expect.arrayContaining([{ type: 'url', url: installUrl }]) },
      });
      expect(response.output_text).toBe(answer);
      const start = answer.indexOf(installUrl);
      expect((response.output[1] as { content: { annotations: unknown[] }[] }).content[0]!.annotations).toEqual([
        { type: 'url_citation', url: installUrl, title: 'Installing svc', start_index: start, end_index: start + installUrl.length },
      ]);
      // The model was given the results it asked for: the search's svc.search.v1 JSON as the tool's answer.
      const followUp = h.upstream.bodies.at(-1)!.messages as { role: string; content: string; tool_calls?: unknown[] }[];
      expect(followUp.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'web_search', arguments: '{"query":"install gateway"}' } }] });
      expect(JSON.parse(followUp.at(-1)!.content)).toMatchObject({ object: 'svc.search.v1', query: 'install gateway', provider: 'embedded', results: expect.arrayContaining([expect.objectContaining({ url: installUrl })]) });
      // The reply's usage is both model calls'.
      expect(response.usage!.output_tokens).toBe(8 + 8);
    } finally {
      h.upstream.setScript(null);
    }
    const found = await rows(member, 3);
    expect(byProduct(found)).toEqual({ chat: 2, search: 1 });
    const search = found.find((row) => row.product === 'search')!;
    expect(search).toMatchObject({ model: 'svc-2.1-search', unit: 'search', status: 'ok', stream: false });
    expect(Number(search.cost_micros)).toBeGreaterThan(0);
    expect(found.filter((row) => row.product === 'chat').every((row) => row.status === 'ok' && row.output_tokens === 8)).toBe(true);
  });

  it('streams the search as a web_search_call item with its progress events, then the cited message', async () => {
    const member = await h.member({ planPackage: 'pro' });
    searchingModel(['install gateway']);
    try {
      const stream = member.client.responses.stream({ model: 'auto', input: 'How do I install svc?', tools: [{ type: 'web_search_preview' }] });
      const types: string[] = [];
      stream.on('event', (event) => types.push(event.type));
      const final = await stream.finalResponse();
      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.web_search_call.in_progress',
        'response.web_search_call.searching',
        'response.web_search_call.completed',
        'response.output_item.done',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.annotation.added',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(final.output.map((item) => item.type)).toEqual(['web_search_call', 'message']);
      expect(final.output_text).toBe(answer);
      // Kept like any response: retrieving it gives the same items.
      expect((await member.client.responses.retrieve(final.id)).output).toEqual(final.output.map((item) => (item.type === 'message' ? { ...item, content: item.content.map(({ parsed: _parsed, ...part }: any) => part) } : item)));
    } finally {
      h.upstream.setScript(null);
    }
    expect(byProduct(await rows(member, 3))).toEqual({ chat: 2, search: 1 });
  });

  it('stops at 3 searches a request: the model is asked once more without the tool', async () => {
    const member = await h.member({ planPackage: 'pro' });
    searchingModel(['install gateway', 'pricing plans', 'quotas pools', 'one too many', 'and more']);
    try {
      const response = await member.client.responses.create({ model: 'auto', input: 'Tell me everything.', tools: [{ type: 'web_search' }] });
      expect(response.output.filter((item) => item.type === 'web_search_call').map((item) => (item as { action: { query: string } }).action.query)).toEqual(['install gateway', 'pricing plans', 'quotas pools']);
      expect(response.output_text).toBe(answer);
      expect(h.upstream.bodies.at(-1)!.tools).toBeUndefined();
    } finally {
      h.upstream.setScript(null);
    }
    expect(byProduct(await rows(member, 7))).toEqual({ chat: 4, search: 3 });
  });

  it('a search that cannot run is a failed web_search_call the model is told about; nothing billed for it', async () => {
    const member = await h.member({ planPackage: 'pro' });
    searchingModel(['   '], 'I could not search.');
    try {
      const response = await member.client.responses.create({ model: 'auto', input: 'Search nothing.', tools: [{ type: 'web_search' }] });
      expect(response.output[0]).toMatchObject({ type: 'web_search_call', status: 'failed', action: { type: 'search', query: '   ', sources: [] } });
      expect(response.output_text).toBe('I could not search.');
      const told = (h.upstream.bodies.at(-1)!.messages as { role: string; content: string }[]).at(-1)!;
      expect(told).toMatchObject({ role: 'tool', content: expect.stringContaining('The search failed: query must not be empty') });
    } finally {
      h.upstream.setScript(null);
    }
    expect(byProduct(await rows(member, 2))).toEqual({ chat: 2 });
  });

  it('filters.allowed_domains keeps only results from those domains', async () => {
    const member = await h.member({ planPackage: 'pro' });
    searchingModel(['gateway']);
    try {
      const response = await member.client.responses.create({ model: 'auto', input: 'News?', tools: [{ type: 'web_search', filters: { allowed_domains: ['https://blog.example.org/'] } }] });
      const sources = (response.output[0] as { action: { sources: { url: string }[] } }).action.sources;
      expect(sources.length).toBeGreaterThan(0);
      expect(sources.every((source) => source.url.startsWith('https://blog.example.org/'))).toBe(true);
    } finally {
      h.upstream.setScript(null);
    }
  });

  it('a model that does not search answers as usual: no web_search_call, nothing but the chat turn', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const response = await member.client.responses.create({ model: 'auto', input: 'Just say hello.', tools: [{ type: 'web_search' }] });
    expect(response.output.map((item) => item.type)).toEqual(['message']);
    expect(h.upstream.bodies.at(-1)!.tools).toEqual([expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'web_search' }) })]);
    expect(byProduct(await rows(member, 1))).toEqual({ chat: 1 });
  });
});

describe('Messages API: the web_search server tool', () => {
  const webSearch = { type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 };

  function claude(member: Member): Anthropic {
    return new Anthropic({ apiKey: member.key, baseURL: h.app.url, maxRetries: 0 });
  }

  it('runs the search: server_tool_use and web_search_tool_result blocks, a cited text block, the search metered', async () => {
    const member = await h.member({ planPackage: 'pro' });
    searchingModel(['install gateway']);
    let message: Anthropic.Message;
    try {
      message = await claude(member).messages.create({ model: 'svc-2.1', max_tokens: 256, tools: [webSearch], messages: [{ role: 'user', content: 'How do I install svc?' }] });
    } finally {
      h.upstream.setScript(null);
    }
    expect(message.content.map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    const [use, result, text] = message.content as [Anthropic.ServerToolUseBlock, Anthropic.WebSearchToolResultBlock, Anthropic.TextBlock];
    expect(use).toEqual({ type: 'server_tool_use', id: expect.stringMatching(/^srvtoolu_/), name: 'web_search', input: { query: 'install gateway' } });
    expect(result.tool_use_id).toBe(use.id);
    expect(result.content).toEqual(expect.arrayContaining([{ type: 'web_search_result', url: installUrl, title: 'Installing svc', encrypted_content: expect.any(String), page_age: expect.anything() }]));
    expect(text.text).toBe(answer);
    expect(text.citations).toEqual([{ type: 'web_search_result_location', url: installUrl, title: 'Installing svc', encrypted_index: expect.any(String), cited_text: expect.stringContaining('npm ci') }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1 });
    expect(byProduct(await rows(member, 3))).toEqual({ chat: 2, search: 1 });
  });

  it('streams the same blocks (the SDK accumulates them), and max_uses lowers the bound', async () => {
    const member = await h.member({ planPackage: 'pro' });
    searchingModel(['install gateway', 'pricing plans', 'quotas pools']);
    let message: Anthropic.Message;
    try {
      message = await claude(member).messages.stream({ model: 'svc-2.1', max_tokens: 256, tools: [webSearch], messages: [{ role: 'user', content: 'Everything?' }] }).finalMessage();
    } finally {
      h.upstream.setScript(null);
    }
    expect(message.content.map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'server_tool_use', 'web_search_tool_result', 'text']);
    expect((message.content[2] as Anthropic.ServerToolUseBlock).input).toEqual({ query: 'pricing plans' });
    expect((message.content[4] as Anthropic.TextBlock).citations).toEqual([expect.objectContaining({ url: installUrl })]);
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 2 });
    expect(byProduct(await rows(member, 5))).toEqual({ chat: 3, search: 2 });
  });

  it('takes an earlier turn with its search blocks back, as text the model can read', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const message = await claude(member).messages.create({
      model: 'svc-2.1',
      max_tokens: 64,
      messages: [
        { role: 'user', content: 'How do I install svc?' },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'install svc' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: installUrl, title: 'Installing svc', encrypted_content: 'x', page_age: null }] },
            { type: 'text', text: 'Use npm ci.', citations: [{ type: 'web_search_result_location', url: installUrl, title: 'Installing svc', encrypted_index: 'y', cited_text: 'npm ci' }] },
          ],
        },
        { role: 'user', content: 'And then?' },
      ],
    });
    expect(message.content[0]).toMatchObject({ type: 'text' });
    expect((h.upstream.bodies.at(-1)!.messages as { role: string; content: string }[])[1]).toEqual({ role: 'assistant', content: `\n[Web search sources: Installing svc <${installUrl}>]\nUse npm ci.` });
  });
});

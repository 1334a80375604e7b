/**
 * Kept responses read back through the official SDK: `client.responses.retrieve` returns the same JSON the
 * reply carried (streamed or not), `client.responses.inputItems.list` pages the input items (`limit`,
 * `order`, `after`; newest first by default, as OpenAI's), `client.responses.delete` forgets a response.
 * Only the payer that made a response sees it; another payer's id, an unknown one, a `store: false`
 * response and an expired one are all the same 404.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { createMember, relaxedLimits, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
});
afterAll(() => h?.close());

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('GET /v1/responses/{id}', () => {
  it('returns the response exactly as the reply carried it', async () => {
    const created = await m.client.responses.create({ model: 'auto', input: 'Hello there.', instructions: 'Be brief.', metadata: { run: '7' } });
    const retrieved = await m.client.responses.retrieve(created.id);
    expect(retrieved).toEqual(created);
    expect(retrieved).toMatchObject({ id: created.id, object: 'response', status: 'completed', instructions: 'Be brief.', metadata: { run: '7' } });
    expect(retrieved.output_text).toBe('Hello from the scripted upstream.');
  });

  it('returns a streamed response as its response.completed event carried it', async () => {
    const streamed = await fetch(`${h.app.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', input: 'Stream me.', stream: true }),
    });
    const events = (await streamed.text()).trim().split('\n\n');
    const completed = JSON.parse(events.at(-1)!.split('\n')[1]!.slice('data: '.length)) as { type: string; response: { id: string } };
    expect(completed.type).toBe('response.completed');
    const raw = await fetch(`${h.app.url}/v1/responses/${completed.response.id}`, { headers: { authorization: `Bearer ${m.key}` } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toContain('application/json');
    const body = (await raw.json()) as Record<string, unknown>;
    expect(body).toEqual(completed.response);
    expect(body).toMatchObject({ status: 'completed', output: [{ type: 'message', content: [{ text: 'tok '.repeat(8) }] }] });
  });

  it('is 404 for another payer, an unknown id, a response made with store: false, and a malformed id', async () => {
    const mine = await m.client.responses.create({ model: 'auto', input: 'Mine.' });
    const stranger = await h.member();
    const theirs = await failure(stranger.client.responses.retrieve(mine.id));
    expect(theirs).toBeInstanceOf(OpenAI.NotFoundError);
    expect(theirs.error).toMatchObject({ code: 'not_found', param: 'response_id', message: expect.stringContaining(mine.id) });
    expect(await failure(m.client.responses.retrieve('resp_0000'))).toBeInstanceOf(OpenAI.NotFoundError);
    const unstored = await m.client.responses.create({ model: 'auto', input: 'Forget me.', store: false });
    expect(await failure(m.client.responses.retrieve(unstored.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const odd = await fetch(`${h.app.url}/v1/responses/${encodeURIComponent('item:msg_1')}`, { headers: { authorization: `Bearer ${m.key}` } });
    expect(odd.status).toBe(404);
    expect(await odd.json()).toMatchObject({ ok: false, code: 'not_found', stage: 'routing', requestId: expect.stringMatching(/^mbr_/) });
    const anonymous = await fetch(`${h.app.url}/v1/responses/${mine.id}`);
    expect(anonymous.status).toBe(401);
  });

  it('refuses to stream a stored response again, by name', async () => {
    const created = await m.client.responses.create({ model: 'auto', input: 'Once.' });
    const again = await fetch(`${h.app.url}/v1/responses/${created.id}?stream=true`, { headers: { authorization: `Bearer ${m.key}` } });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: { param: 'stream' } });
  });
});

describe('DELETE /v1/responses/{id}', () => {
  it('forgets the response for its payer only: then retrieve, input items and previous_response_id miss it', async () => {
    const created = await m.client.responses.create({ model: 'auto', input: 'Delete me later.' });
    const stranger = await h.member();
    expect(await failure(stranger.client.responses.delete(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await m.client.responses.retrieve(created.id)).id).toBe(created.id);

    const reply = await fetch(`${h.app.url}/v1/responses/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${m.key}` } });
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ id: created.id, object: 'response', deleted: true });

    expect(await failure(m.client.responses.retrieve(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await failure(m.client.responses.inputItems.list(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await failure(m.client.responses.delete(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
    const chained = await failure(m.client.responses.create({ model: 'auto', input: 'Still there?', previous_response_id: created.id }));
    expect(chained.error).toMatchObject({ param: 'previous_response_id' });
    const referenced = await failure(m.client.responses.create({ model: 'auto', input: [{ type: 'item_reference', id: created.output[0]!.id! }] }));
    expect(referenced.error).toMatchObject({ param: 'input[0].id' });
  });
});

describe('GET /v1/responses/{id}/input_items', () => {
  const input = [
    { role: 'developer' as const, content: 'Answer tersely.' },
    { role: 'user' as const, content: [{ type: 'input_text' as const, text: 'First question.' }] },
    { type: 'function_call' as const, call_id: 'call_a', name: 'lookup', arguments: '{"q":"x"}' },
    { type: 'function_call_output' as const, call_id: 'call_a', output: 'found x' },
    { role: 'user' as const, content: 'Second question.' },
  ];

  it('lists the input items newest first by default, each with an id; messages with content parts', async () => {
    const created = await m.client.responses.create({ model: 'auto', input, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }] });
    const page = await m.client.responses.inputItems.list(created.id);
    expect(page.data.map((item) => item.type)).toEqual(['message', 'function_call_output', 'function_call', 'message', 'message']);
    expect(page.data[0]).toMatchObject({ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Second question.' }], id: expect.stringMatching(/^msg_/) });
    expect(page.data.at(-1)).toMatchObject({ role: 'developer', content: [{ type: 'input_text', text: 'Answer tersely.' }] });
    expect(page.data[1]).toMatchObject({ call_id: 'call_a', output: 'found x', id: expect.stringMatching(/^fco_/) });
    const raw = (await (await fetch(`${h.app.url}/v1/responses/${created.id}/input_items`, { headers: { authorization: `Bearer ${m.key}` } })).json()) as Record<string, unknown>;
    expect(raw).toMatchObject({ object: 'list', has_more: false, first_id: page.data[0]!.id, last_id: page.data.at(-1)!.id });
    // The ids are kept: the same on every read.
    expect((await m.client.responses.inputItems.list(created.id)).data.map((item) => item.id)).toEqual(page.data.map((item) => item.id));
  });

  it('pages with limit and after, in either order; the SDK follows the pages', async () => {
    const created = await m.client.responses.create({ model: 'auto', input, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }] });
    const first = await m.client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' });
    expect(first.data.map((item) => item.type)).toEqual(['message', 'message']);
    expect(first.has_more).toBe(true);
    const second = await m.client.responses.inputItems.list(created.id, { limit: 2, order: 'asc', after: first.data[1]!.id });
    expect(second.data.map((item) => item.type)).toEqual(['function_call', 'function_call_output']);
    const all: string[] = [];
    for await (const item of m.client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' })) all.push(item.type);
    expect(all).toEqual(['message', 'message', 'function_call', 'function_call_output', 'message']);
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['order=sideways', 'order'],
      ['after=msg_nope', 'after'],
    ]) {
      const reply = await fetch(`${h.app.url}/v1/responses/${created.id}/input_items?${query}`, { headers: { authorization: `Bearer ${m.key}` } });
      expect(reply.status, query).toBe(400);
      expect(((await reply.json()) as { error: { param: string } }).error.param).toBe(param);
    }
  });
});

describe('retention', () => {
  let short: TestApp;

  beforeAll(async () => {
    short = await startApp(h.mode.config, { config: { ...relaxedLimits, gateway: { responsesRetentionSeconds: 1 } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
  });
  afterAll(() => short?.close());

  it('a response is kept for gateway.responsesRetentionSeconds, then it is a 404 like any other', async () => {
    const member = await createMember(short, { planPackage: 'pro' });
    const created = await member.client.responses.create({ model: 'auto', input: 'Short-lived.' });
    expect((await member.client.responses.retrieve(created.id)).id).toBe(created.id);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const gone = await failure(member.client.responses.retrieve(created.id));
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect(gone.error).toMatchObject({ message: expect.stringContaining('kept for 1 s') });
    expect(await failure(member.client.responses.inputItems.list(created.id))).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

/**
 * A receipt for every request (issue 51): each whole reply says what it cost (`x-svc-cost` in integer
 * micro-units, `x-svc-cost-currency`), each stream says it in its final usage (`usage.cost`), and both are
 * exactly what the ledger row records and the member's usage history shows — through the official openai
 * and @anthropic-ai/sdk clients, on real PostgreSQL and Redis.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultModels } from '../../../server/config/catalogue.ts';
import { settled } from '../../helpers/app.ts';
import { startHarness, type Harness, type Member } from '../gateway/harness.ts';

let h: Harness;
let m: Member;
let claude: Anthropic;

// An embedding model too, so /v1/embeddings is priced here as well.
const models = { ...defaultModels, 'svc-embed': { name: 'svc Embed', kind: 'embedding', tier: 'fast', inputPrice: 0.02, contextLength: 8192 } };

beforeAll(async () => {
  h = await startHarness({ config: { models } });
  m = await h.member({ planPackage: 'pro' });
  claude = new Anthropic({ apiKey: m.key, baseURL: h.app.url, maxRetries: 0 });
});
afterAll(() => h?.close());

interface Billed {
  ledger: { cost_micros: string; currency: string; input_tokens: number; output_tokens: number; estimated: boolean; stream: boolean };
  history: { cost: { amountMicros: number; currency: string }; inputTokens: number; outputTokens: number; pricing: { total: { amountMicros: number }; currency: string; lines: { tokenClass: string; tokens: number }[] } };
}

/** What the ledger and the member's request detail say a request (by the id its reply carried) cost. */
async function billed(requestId: string): Promise<Billed> {
  await settled(h.app);
  const { rows } = await h.database.query('select cost_micros, currency, input_tokens, output_tokens, estimated, stream from usage_ledger where request_id = $1', [requestId]);
  expect(rows).toHaveLength(1);
  const response = await fetch(`${h.app.url}/api/membership/usage/requests/${requestId}`, { headers: { authorization: `Bearer ${m.key}` } });
  expect(response.status).toBe(200);
  const { request } = (await response.json()) as { request: Billed['history'] };
  return { ledger: rows[0] as Billed['ledger'], history: request };
}

/** The receipt agrees with the ledger row, the history entry and the history's breakdown, to the micro. */
async function expectReceipt(requestId: string | null, amountMicros: number, currency: string): Promise<Billed> {
  expect(requestId).toMatch(/^mbr_/);
  const found = await billed(requestId!);
  expect(Number.isSafeInteger(amountMicros) && amountMicros > 0).toBe(true);
  expect(Number(found.ledger.cost_micros)).toBe(amountMicros);
  expect(found.ledger.currency.trim()).toBe(currency);
  expect(found.history.cost).toMatchObject({ amountMicros, currency });
  expect(found.history.pricing).toMatchObject({ total: { amountMicros }, currency, matchesCharge: true });
  expect(found.history.pricing.lines.map((line) => [line.tokenClass, line.tokens])).toEqual([
    ['input', found.ledger.input_tokens],
    ['output', found.ledger.output_tokens],
  ]);
  return found;
}

describe('x-svc-cost on whole replies', () => {
  it('chat completions (the fast path and the parsed one), legacy completions and embeddings', async () => {
    const { data, response } = await m.client.chat.completions.create({ model: 'svc-2.1', messages: [{ role: 'user', content: 'What does it cost?' }] }).withResponse();
    expect(data.usage).not.toHaveProperty('cost');
    expect(response.headers.get('x-svc-cost-currency')).toBe('USD');
    await expectReceipt(response.headers.get('x-request-id'), Number(response.headers.get('x-svc-cost')), 'USD');

    // Usage the upstream left out: counted by svc, and the count is what the header prices.
    const estimated = await m.client.chat.completions
      .create({ model: 'auto', messages: [{ role: 'user', content: '#script {"usage":"absent","content":"counted by svc"}\nHi' }] })
      .withResponse();
    const found = await expectReceipt(estimated.response.headers.get('x-request-id'), Number(estimated.response.headers.get('x-svc-cost')), 'USD');
    expect(found.ledger.estimated).toBe(true);

    const legacy = await m.client.completions.create({ model: 'auto', prompt: 'Once upon a time', max_tokens: 50 }).withResponse();
    await expectReceipt(legacy.response.headers.get('x-request-id'), Number(legacy.response.headers.get('x-svc-cost')), 'USD');

    const embedding = await m.client.embeddings.create({ model: 'svc-embed', input: 'what it cost' }).withResponse();
    await expectReceipt(embedding.response.headers.get('x-request-id'), Number(embedding.response.headers.get('x-svc-cost')), 'USD');
  });

  it('the Responses API and the Messages API', async () => {
    const responses = await m.client.responses.create({ model: 'svc-2.1', input: 'Receipt please' }).withResponse();
    await expectReceipt(responses.response.headers.get('x-request-id'), Number(responses.response.headers.get('x-svc-cost')), 'USD');

    const message = await claude.messages.create({ model: 'svc-2.1', max_tokens: 200, messages: [{ role: 'user', content: 'Receipt please' }] }).withResponse();
    expect(message.data.usage).not.toHaveProperty('cost');
    await expectReceipt(message.response.headers.get('x-request-id'), Number(message.response.headers.get('x-svc-cost')), 'USD');
  });
});

describe('usage.cost at the end of a stream', () => {
  it('chat completions: the usage chunk (include_usage), also when svc counted the tokens', async () => {
    for (const content of ['#script {"chunks":7}\nStream it', '#script {"chunks":5,"usage":"absent"}\nStream it']) {
      const { data: stream, response } = await m.client.chat.completions
        .create({ model: 'svc-2.1-fast', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content }] })
        .withResponse();
      expect(response.headers.get('x-svc-cost')).toBeNull(); // the head leaves before the cost is known
      const usages: { cost?: { amount_micros: number; currency: string } }[] = [];
      for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage as unknown as (typeof usages)[number]);
      expect(usages).toHaveLength(1);
      const cost = usages[0]!.cost!;
      expect(cost.currency).toBe('USD');
      await expectReceipt(response.headers.get('x-request-id'), cost.amount_micros, cost.currency);
    }
  });

  it('tools with stream: true (replayed from one whole upstream reply) carry it too', async () => {
    const { data: stream, response } = await m.client.chat.completions
      .create({
        model: 'auto',
        stream: true,
        stream_options: { include_usage: true },
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
        messages: [{ role: 'user', content: '#script {"toolCalls":[{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}]}\nWeather?' }],
      })
      .withResponse();
    let cost: { amount_micros: number; currency: string } | undefined;
    for await (const chunk of stream) if (chunk.usage) cost = (chunk.usage as { cost?: typeof cost }).cost;
    await expectReceipt(response.headers.get('x-request-id'), cost!.amount_micros, cost!.currency);
  });

  it('the Responses API: response.completed usage', async () => {
    const { data: stream, response } = await m.client.responses.create({ model: 'svc-2.1', input: '#script {"chunks":4}\nStream a receipt', stream: true }).withResponse();
    let cost: { amount_micros: number; currency: string } | undefined;
    for await (const event of stream) if (event.type === 'response.completed') cost = (event.response.usage as unknown as { cost: typeof cost }).cost;
    await expectReceipt(response.headers.get('x-request-id'), cost!.amount_micros, cost!.currency);
  });

  it('the Messages API: message_delta usage (Anthropic SDK)', async () => {
    const { data: stream, response } = await claude.messages
      .create({ model: 'svc-2.1-fast', max_tokens: 100, stream: true, messages: [{ role: 'user', content: '#script {"chunks":6}\nStream a receipt' }] })
      .withResponse();
    let cost: { amount_micros: number; currency: string } | undefined;
    for await (const event of stream) if (event.type === 'message_delta') cost = (event.usage as unknown as { cost: typeof cost }).cost;
    await expectReceipt(response.headers.get('x-request-id'), cost!.amount_micros, cost!.currency);
  });
});

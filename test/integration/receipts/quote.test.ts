/**
 * Quotes (issue 51): `POST /api/membership/v1/quote` and GraphQL `quote` answer what a body would reserve
 * (its worst-case cost) without calling the upstream — the same reservation admission then holds for the
 * same body sent for real, the same output clamp, the same validation errors as the gateway.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../../helpers/app.ts';
import { startHarness, type Harness, type Member } from '../gateway/harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
});
afterAll(() => h?.close());

interface QuoteBody {
  model: string;
  class: string;
  worstCase: { inputTokens: number; outputTokens: number };
  maxTokensClampedTo: number | null;
  reservation: { amountMicros: number; currency: string };
  lines: { tokenClass: string; tokens: number; pricePerMillion: { amountMicros: number } }[];
  pools: { window: string; fits: boolean; remaining: { amountMicros: number } }[];
  fits: boolean;
}

async function quote(endpoint: unknown, body: unknown, key = m.key): Promise<{ status: number; json: Record<string, any> }> {
  const response = await fetch(`${h.app.url}/api/membership/v1/quote`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'accept-language': 'zh-CN' },
    body: JSON.stringify({ endpoint, body }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

async function reservedFor(requestId: string | null): Promise<number> {
  await settled(h.app);
  const { rows } = await h.database.query('select reserved_micros from usage_ledger where request_id = $1', [requestId]);
  expect(rows).toHaveLength(1);
  return Number(rows[0]!.reserved_micros);
}

describe('quote', () => {
  it('chat completions: the reservation admission holds for the same body, the output clamped to the model limit, nothing sent upstream', async () => {
    const body = { model: 'svc-2.1', max_tokens: 100_000, messages: [{ role: 'user' as const, content: 'How much could this cost?' }] };
    const before = h.upstream.stats.requests;
    const { status, json } = await quote('chat.completions', body);
    expect(status).toBe(200);
    const q = json.quote as QuoteBody;
    expect(h.upstream.stats.requests).toBe(before);
    expect(q).toMatchObject({ model: 'svc-2.1', class: 'premium', maxTokensClampedTo: 8192, worstCase: { outputTokens: 8192 }, fits: true });
    expect(q.lines.map((line) => [line.tokenClass, line.tokens])).toEqual([
      ['input', q.worstCase.inputTokens],
      ['output', 8192],
    ]);
    expect(q.pools.map((pool) => pool.window).sort()).toEqual(['day', 'month', 'week']);
    const { response } = await m.client.chat.completions.create(body).withResponse();
    expect(response.headers.get('x-svc-max-tokens')).toBe('8192');
    expect(await reservedFor(response.headers.get('x-request-id'))).toBe(q.reservation.amountMicros);
  });

  it('the Messages and Responses APIs: the same reservation as the real request', async () => {
    const message = { model: 'svc-2.1-fast', max_tokens: 300, messages: [{ role: 'user' as const, content: 'Quote me' }] };
    const quoted = (await quote('messages', message)).json.quote as QuoteBody;
    const claude = new Anthropic({ apiKey: m.key, baseURL: h.app.url, maxRetries: 0 });
    const sent = await claude.messages.create(message).withResponse();
    expect(await reservedFor(sent.response.headers.get('x-request-id'))).toBe(quoted.reservation.amountMicros);
    expect(quoted.worstCase.outputTokens).toBe(300);

    const input = { model: 'svc-2.1', input: 'Quote me', max_output_tokens: 500 };
    const responses = (await quote('responses', input)).json.quote as QuoteBody;
    const real = await m.client.responses.create(input).withResponse();
    expect(await reservedFor(real.response.headers.get('x-request-id'))).toBe(responses.reservation.amountMicros);
    expect(responses.worstCase.outputTokens).toBe(500);
  });

  it('a bad body gets the error the gateway gives (in the caller’s language); an unknown endpoint is named', async () => {
    const bad = { model: 'svc-2.1', messages: [{ role: 'wizard', content: 'x' }] };
    const quoted = await quote('chat.completions', bad);
    const gateway = await fetch(`${h.app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json', 'accept-language': 'zh-CN' }, body: JSON.stringify(bad) });
    const real = (await gateway.json()) as Record<string, any>;
    expect(quoted.status).toBe(gateway.status);
    expect(quoted.json).toMatchObject({ ok: false, code: real.code, message: real.message, messageZh: real.messageZh, error: { param: real.error.param } });

    const unknownModel = await quote('chat.completions', { model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] });
    expect(unknownModel.status).toBe(404);
    expect(unknownModel.json.code).toBe('model_not_found');

    const endpoint = await quote('embeddings', { model: 'auto' });
    expect(endpoint.status).toBe(400);
    expect(endpoint.json).toMatchObject({ code: 'invalid_request', error: { param: 'endpoint' } });
    expect(endpoint.json.messageZh).toContain('endpoint 必须是');
  });

  it('GraphQL quote gives the same figures', async () => {
    const body = { model: 'auto', max_tokens: 64, messages: [{ role: 'user', content: 'Same?' }] };
    const rest = (await quote('chat.completions', body)).json.quote as QuoteBody;
    const response = await fetch(`${h.app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query Q($body: JSON!) { quote(endpoint: chat_completions, body: $body) { model reservation { amountMicros currency } worstCaseOutputTokens maxTokensClampedTo fits } }',
        variables: { body },
      }),
    });
    const { data, errors } = (await response.json()) as { data: { quote: Record<string, unknown> }; errors?: unknown };
    expect(errors).toBeUndefined();
    expect(data.quote).toEqual({ model: 'auto', reservation: { amountMicros: rest.reservation.amountMicros, currency: 'USD' }, worstCaseOutputTokens: 64, maxTokensClampedTo: null, fits: true });
  });
});

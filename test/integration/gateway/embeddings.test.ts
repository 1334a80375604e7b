/**
 * `POST /v1/embeddings` (issue 48 item 8): an embedding model the operator declares (`kind: embedding`)
 * answers the openai SDK (whose default asks for base64 and decodes it), LangChain's OpenAIEmbeddings and
 * LlamaIndex's OpenAIEmbedding unchanged — one input, a batch, token ids, `dimensions`, `encoding_format` float or base64 decoding to the
 * same floats. Each request is one ledger row of product `embedding`, billed by the upstream's input tokens
 * (or svc's count when it reports none) and refunded when the upstream fails. Without an embedding model
 * (the default catalogue), the answer is a 503 that says what to configure.
 */
import { OpenAIEmbeddings } from '@langchain/openai';
import { OpenAIEmbedding } from '@llamaindex/openai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultModels } from '../../../server/config/catalogue.ts';
import { costMicros } from '../../../server/metering/pricing.ts';
import { scriptedEmbedding } from '../../fixtures/scripted-upstream.ts';
import { startApp } from '../../helpers/app.ts';
import { createMember, ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

const models = { ...defaultModels, 'svc-embed': { name: 'svc Embed', kind: 'embedding', tier: 'fast', inputPrice: 0.02, contextLength: 8192 } };

let h: Harness;
let m: Member;
let baseURL: string;

beforeAll(async () => {
  h = await startHarness({ config: { models } });
  m = await h.member({ planPackage: 'pro' });
  baseURL = `${h.app.url}/v1`;
});
afterAll(() => h?.close());

/** The scripted model's token count of texts: a token per 4 characters, at least one each. */
const scriptedTokens = (...texts: string[]) => texts.reduce((sum, text) => sum + Math.max(1, Math.ceil(text.length / 4)), 0);

function client(member: Member, maxRetries = 2): OpenAI {
  return new OpenAI({ apiKey: member.key, baseURL, maxRetries });
}

function post(key: string, body: unknown): Promise<Response> {
  return fetch(`${baseURL}/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function floats(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

describe('the openai SDK', () => {
  it('embeds one input (the SDK asks for base64 and decodes it) to the same floats as encoding_format float; usage and one ledger row by input tokens', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const sent: unknown[] = [];
    const recording = new OpenAI({ apiKey: member.key, baseURL, fetch: (url, init) => (sent.push(JSON.parse(String(init?.body))), fetch(url, init)) });
    const sdk = await recording.embeddings.create({ model: 'svc-embed', input: 'The quick brown fox' });
    expect(sent).toEqual([{ model: 'svc-embed', input: 'The quick brown fox', encoding_format: 'base64' }]);
    expect(h.upstream.bodies.at(-1)).toMatchObject({ model: 'svc-embed', input: 'The quick brown fox', encoding_format: 'float' });
    expect(sdk).toMatchObject({ object: 'list', model: 'svc-embed', usage: { prompt_tokens: scriptedTokens('The quick brown fox'), total_tokens: scriptedTokens('The quick brown fox') } });
    expect(sdk.data).toEqual([{ object: 'embedding', index: 0, embedding: scriptedEmbedding('The quick brown fox', 8) }]);
    const plain = await client(member).embeddings.create({ model: 'svc-embed', input: 'The quick brown fox', encoding_format: 'float' });
    expect(plain.data[0]!.embedding).toEqual(sdk.data[0]!.embedding);
    const rows = await ledgerRows(h.database, member.accountId, 2);
    const rates = h.app.app.services.registry.get('svc-embed')!.rates;
    expect(rows[0]).toMatchObject({ product: 'embedding', model: 'svc-embed', status: 'ok', stream: false, input_tokens: 5, output_tokens: 0, estimated: false, unit: null });
    expect(Number(rows[0]!.cost_micros)).toBe(costMicros(rates, 5, 0));
    expect(rates).toMatchObject({ class: 'fast', inputPerMillion: 6000, outputPerMillion: 0 });
  });

  it('a batch keeps its order; token-id inputs, dimensions and fields svc does not own reach the model server', async () => {
    const texts = ['first text', 'second, longer text', 'third'];
    const batch = await m.client.embeddings.create({ model: 'svc-embed', input: texts });
    expect(batch.data.map((item) => item.index)).toEqual([0, 1, 2]);
    expect(batch.data.map((item) => item.embedding)).toEqual(texts.map((text) => scriptedEmbedding(text, 8)));
    expect(batch.usage.prompt_tokens).toBe(scriptedTokens(...texts));
    const ids = await m.client.embeddings.create({ model: 'svc-embed', input: [[1, 2, 3], [40, 50]], dimensions: 16 });
    expect(h.upstream.bodies.at(-1)).toMatchObject({ input: [[1, 2, 3], [40, 50]], dimensions: 16 });
    expect(ids.data.map((item) => item.embedding)).toEqual([scriptedEmbedding([1, 2, 3], 16), scriptedEmbedding([40, 50], 16)]);
    expect((await post(m.key, { model: 'svc-embed', input: 'query: svc', input_type: 'query', user: 'u-1' })).status).toBe(200);
    expect(h.upstream.bodies.at(-1)).toEqual({ model: 'svc-embed', input: 'query: svc', encoding_format: 'float', input_type: 'query' });
  });

  it('encoding_format base64 on the wire is little-endian float32 of the same numbers; a server that answers base64 unasked is read too', async () => {
    const reply = await post(m.key, { model: 'svc-embed', input: ['alpha', 'beta'], encoding_format: 'base64' });
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as { data: { embedding: string }[] };
    expect(body.data.map((item) => floats(item.embedding))).toEqual([scriptedEmbedding('alpha', 8), scriptedEmbedding('beta', 8)]);
    const unasked = await m.client.embeddings.create({ model: 'svc-embed', input: '#script {"embeddingFormat":"base64"} gamma', encoding_format: 'float' });
    expect(unasked.data[0]!.embedding).toEqual(scriptedEmbedding('#script {"embeddingFormat":"base64"} gamma', 8));
  });

  it('without usage from the model server, svc counts the tokens (estimated)', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const reply = await client(member).embeddings.create({ model: 'svc-embed', input: '#script {"usage":"absent"} count me' });
    expect(reply.usage.prompt_tokens).toBeGreaterThan(0);
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ product: 'embedding', status: 'ok', estimated: true, input_tokens: reply.usage.prompt_tokens, output_tokens: 0 });
  });
});

describe('LangChain', () => {
  it('OpenAIEmbeddings embedQuery and embedDocuments, with svc-embed and with its default model name', async () => {
    const named = new OpenAIEmbeddings({ model: 'svc-embed', apiKey: m.key, configuration: { baseURL } });
    expect(await named.embedQuery('what is svc?')).toEqual(scriptedEmbedding('what is svc?', 8));
    const documents = ['svc is a gateway.', 'It meters tokens.'];
    expect(await named.embedDocuments(documents)).toEqual(documents.map((text) => scriptedEmbedding(text, 8)));
    // Its default, text-embedding-ada-002, stands for svc-embed (compat.modelAliases).
    const unnamed = new OpenAIEmbeddings({ apiKey: m.key, configuration: { baseURL } });
    expect(await unnamed.embedQuery('default model')).toEqual(scriptedEmbedding('default model', 8));
    expect(h.upstream.bodies.at(-1)).toMatchObject({ model: 'svc-embed' });
  });
});

describe('LlamaIndex', () => {
  it('OpenAIEmbedding getTextEmbedding and getTextEmbeddings, with svc-embed and with its default model name', async () => {
    const named = new OpenAIEmbedding({ model: 'svc-embed', apiKey: m.key, baseURL, maxRetries: 0 });
    expect(await named.getTextEmbedding('what is svc?')).toEqual(scriptedEmbedding('what is svc?', 8));
    const documents = ['svc is a gateway.', 'It meters tokens.'];
    expect(await named.getTextEmbeddings(documents)).toEqual(documents.map((text) => scriptedEmbedding(text, 8)));
    // Its default, text-embedding-ada-002, stands for svc-embed (compat.modelAliases).
    const unnamed = new OpenAIEmbedding({ apiKey: m.key, baseURL, maxRetries: 0 });
    expect(await unnamed.getTextEmbedding('default model')).toEqual(scriptedEmbedding('default model', 8));
    expect(h.upstream.bodies.at(-1)).toMatchObject({ model: 'svc-embed' });
  });
});

describe('what cannot be served', () => {
  it('an upstream failure is refunded: 502 with quotaRefunded, a refunded row, nothing billed', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const before = h.upstream.stats.requests;
    const error = await client(member, 0)
      .embeddings.create({ model: 'svc-embed', input: '#script {"status":500}' })
      .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(h.upstream.stats.requests - before).toBe(1);
    const raw = await post(member.key, { model: 'svc-embed', input: '#script {"status":503}' });
    expect(raw.status).toBe(503);
    expect(await raw.json()).toMatchObject({ stage: 'upstream', debug: { quotaRefunded: true, productModel: 'svc-embed', upstreamStatus: 503 } });
    const rows = await ledgerRows(h.database, member.accountId, 2);
    expect(rows.map((row) => [row.product, row.status, row.input_tokens, row.cost_micros])).toEqual([
      ['embedding', 'refunded', 0, '0'],
      ['embedding', 'refunded', 0, '0'],
    ]);
  });

  it("an upstream's refusal keeps its status and reason; a reply with the wrong number of vectors is an upstream error", async () => {
    const refused = await post(m.key, { model: 'svc-embed', input: '#script {"status":400,"errorMessage":"input too long for this model"}' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 'upstream_rejected', message: expect.stringContaining('input too long for this model') });
    h.upstream.setScript(() => ({ embeddings: 1 }));
    try {
      const wrong = await post(m.key, { model: 'svc-embed', input: ['one', 'two'] });
      expect(wrong.status).toBe(502);
      expect(await wrong.json()).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('1 embeddings for 2 inputs'), debug: { quotaRefunded: true } });
    } finally {
      h.upstream.setScript(null);
    }
  });

  it('bad requests are 400s naming the field; a chat model makes no embeddings; an embedding model no chat', async () => {
    const cases: [unknown, string][] = [
      [{ model: 'svc-embed' }, 'input'],
      [{ model: 'svc-embed', input: '' }, 'input'],
      [{ model: 'svc-embed', input: [] }, 'input'],
      [{ model: 'svc-embed', input: ['ok', ''] }, 'input[1]'],
      [{ model: 'svc-embed', input: [[1, -2]] }, 'input[0]'],
      [{ model: 'svc-embed', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
      [{ model: 'svc-embed', input: 'x', dimensions: 0 }, 'dimensions'],
      [{ input: 'x' }, 'model'],
      [{ model: 'svc-2.1', input: 'x' }, 'model'],
    ];
    for (const [body, param] of cases) {
      const reply = await post(m.key, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(((await reply.json()) as { error: { param: string } }).error.param, JSON.stringify(body)).toBe(param);
    }
    const chatModel = await post(m.key, { model: 'svc-2.1', input: 'x' });
    expect(((await chatModel.json()) as { message: string }).message).toContain('svc-2.1 is a chat model: it makes no embeddings. Use an embedding model: svc-embed.');
    const unknown = await post(m.key, { model: 'bge-m3', input: 'x' });
    expect(unknown.status).toBe(404);
    const chat = await m.client.chat.completions.create({ model: 'svc-embed', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(chat).toMatchObject({ status: 400, param: 'model', message: expect.stringContaining('svc-embed is an embedding model: it answers POST /v1/embeddings only') });
  });

  it('GET /v1/models lists the embedding model with its context length', async () => {
    const listed = (await m.client.models.retrieve('svc-embed')) as unknown as Record<string, unknown>;
    expect(listed).toMatchObject({ id: 'svc-embed', context_length: 8192 });
    expect(listed).not.toHaveProperty('max_output_tokens');
  });
});

describe('no embedding model configured', () => {
  it('the default catalogue: a 503 upstream_not_configured saying what to configure, not retried, nothing billed', async () => {
    const app = await startApp(h.mode.config, { env: { SVC_UPSTREAM_URL: h.upstream.url } });
    try {
      const member = await createMember(app, { planPackage: 'pro' });
      const before = h.upstream.stats.requests;
      const reply = await fetch(`${app.url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'text-embedding-3-small', input: 'x' }) });
      expect(reply.status).toBe(503);
      expect(reply.headers.get('x-should-retry')).toBe('false');
      const body = (await reply.json()) as { code: string; stage: string; message: string; messageZh: string };
      expect(body).toMatchObject({ code: 'upstream_not_configured', stage: 'routing' });
      expect(body.message).toContain('No embedding model is configured on this server');
      expect(body.message).toContain('kind: embedding');
      expect(body.messageZh).toContain('kind: embedding');
      const sdk = await member.client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
      expect(sdk).toMatchObject({ status: 503, code: 'upstream_not_configured' });
      expect(h.upstream.stats.requests).toBe(before);
      expect(await ledgerRows(h.database, member.accountId, 0, 0)).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('an embedding model without a deployment and without SVC_UPSTREAM_URL: the 503 names its deployments key', async () => {
    const app = await startApp(h.mode.config, { config: { models } });
    try {
      const member = await createMember(app, { planPackage: 'pro' });
      const reply = await fetch(`${app.url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'svc-embed', input: 'x' }) });
      expect(reply.status).toBe(503);
      const body = (await reply.json()) as { code: string; message: string };
      expect(body.code).toBe('upstream_not_configured');
      expect(body.message).toContain('models.svc-embed.deployments');
    } finally {
      await app.close();
    }
  });
});

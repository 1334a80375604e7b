/**
 * svc-img through `POST /v1/chat/completions`, with the official SDK, against the scripted upstream's
 * `/images/generations`: Markdown links that serve exactly the bytes the upstream produced, one content
 * chunk when streaming, images in messages never fetched, worst-case reservation and refunds. Real
 * PostgreSQL and Redis; media in a temporary directory.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meteredCost } from '../../../server/metering/pricing.ts';
import { newMediaId } from '../../../server/modules/media/media.storage.ts';
import { imageOutputTokens } from '../../../server/modules/media/media.tokens.ts';
import { ledgerRows, startHarness, type Harness, type Member } from '../gateway/harness.ts';

let h: Harness;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-images-'));
  h = await startHarness({ config: { media: { storage: { kind: 'local', dir } } } });
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The SDK's request type has no `size`; svc-img takes it as an extra field. */
type ImageChatParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming & { size?: string };

const linkPattern = /!\[((?:\\.|[^\]\\])*)\]\((http:\/\/[^)]+\/v1\/media\/([A-Za-z0-9_-]{22})\.png)\)/g;

function links(content: string): { alt: string; url: string; id: string }[] {
  return [...content.matchAll(linkPattern)].map((match) => ({ alt: match[1]!, url: match[2]!, id: match[3]! }));
}

async function poolUsed(member: Member): Promise<number> {
  const principal = await h.app.app.services.identity.authenticateBearer(`Bearer ${member.key}`);
  const report = await h.app.app.services.usage.report(principal.payer);
  return report.pools.find((pool) => pool.class === 'premium' && pool.window === 'day')!.used.amountMicros;
}

function storedFiles(): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

describe('svc-img through chat completions', () => {
  it('answers with Markdown links that serve exactly the bytes the upstream produced, and bills per image by area', async () => {
    const member = await h.member();
    const prompt = 'A red fox in fresh snow, [watercolour]';
    const completion = await member.client.chat.completions.create({
      model: 'svc-img',
      messages: [
        { role: 'system', content: 'ignored for images' },
        { role: 'user', content: prompt },
      ],
      n: 2,
      size: '512x256',
    } as ImageChatParams);

    const upstream = h.upstream.media.at(-1)!;
    expect(upstream.endpoint).toBe('images');
    expect(upstream.body).toEqual({ model: 'svc-img', prompt, n: 2, size: '512x256', response_format: 'b64_json' });
    expect(upstream.produced).toHaveLength(2);

    expect(completion).toMatchObject({ object: 'chat.completion', model: 'svc-img' });
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant', refusal: null } });
    const content = completion.choices[0]!.message.content!;
    const found = links(content);
    expect(found).toHaveLength(2);
    expect(content).toBe(found.map((link) => `![${link.alt}](${link.url})`).join('\n\n'));
    expect(found[0]!.alt).toBe('A red fox in fresh snow, \\[watercolour\\]');
    for (const [index, link] of found.entries()) {
      expect(link.url.startsWith(`${h.app.url}/v1/media/`)).toBe(true);
      const response = await fetch(link.url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await response.arrayBuffer()).equals(upstream.produced[index]!)).toBe(true);
    }
    expect(found[0]!.id).not.toBe(found[1]!.id);

    // 512×256 is an eighth of 1024×1024: 125 of the 1,000 output tokens per image, for each of two.
    const output = imageOutputTokens(1000, 512, 256, 2);
    expect(output).toBe(250);
    expect(completion.usage).toMatchObject({ completion_tokens: output });
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(5);
    expect(completion.usage!.prompt_tokens).toBeLessThan(Buffer.byteLength(prompt));
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    const rates = h.app.app.services.registry.get('svc-img')!.rates;
    expect(row).toMatchObject({ product: 'image', unit: 'image', model: 'svc-img', status: 'ok', stream: false, output_tokens: 250, input_tokens: completion.usage!.prompt_tokens });
    expect(Number(row!.unit_quantity)).toBe(2);
    expect(Number(row!.cost_micros)).toBe(meteredCost(rates, { inputTokens: row!.input_tokens, outputTokens: 250 }));
    // Reserved at the worst case before the call: every byte of the prompt a token, n images of the size asked.
    expect(Number(row!.reserved_micros)).toBe(meteredCost(rates, { inputTokens: Buffer.byteLength(prompt), outputTokens: 250 }));
  });

  it('answers a guessed or altered id with 404', async () => {
    const member = await h.member();
    const completion = await member.client.chat.completions.create({ model: 'svc-img', messages: [{ role: 'user', content: 'a lighthouse' }] });
    const [link] = links(completion.choices[0]!.message.content!);
    expect((await fetch(link!.url)).status).toBe(200);
    for (const id of [newMediaId(), `${link!.id.slice(0, -1)}${link!.id.endsWith('A') ? 'B' : 'A'}`]) {
      const response = await fetch(`${h.app.url}/v1/media/${id}.png`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ ok: false, code: 'not_found', error: { code: 'not_found' } });
    }
  });

  it('streams the same reply as one content chunk, framed as the SDKs parse it', async () => {
    const member = await h.member();
    const stream = await member.client.chat.completions.create({
      model: 'svc-img',
      messages: [{ role: 'user', content: 'a small boat at dawn' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const contentChunks = chunks.filter((chunk) => chunk.choices[0]?.delta?.content);
    expect(contentChunks).toHaveLength(1);
    expect(contentChunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const [link] = links(contentChunks[0]!.choices[0]!.delta.content!);
    expect(link!.alt).toBe('a small boat at dawn');
    const bytes = Buffer.from(await (await fetch(link!.url)).arrayBuffer());
    expect(bytes.equals(h.upstream.media.at(-1)!.produced[0]!)).toBe(true);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 1000 });
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);

    // On the wire: data lines only, the role once, [DONE] last; no usage chunk unless asked for.
    const raw = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-img', messages: [{ role: 'user', content: 'a kite' }], stream: true }),
    });
    expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await raw.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events.every((event) => event.startsWith('data: ') && !event.slice(6).includes('\n'))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events).toHaveLength(3);
    expect(text.match(/"role"/g)).toHaveLength(1);
    expect(text).not.toContain('"usage"');
  });

  it('never fetches images sent in messages; the prompt is the last user message’s text', async () => {
    let hits = 0;
    const probe: Server = createServer((_request, response) => {
      hits++;
      response.end();
    });
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    try {
      const member = await h.member();
      const completion = await member.client.chat.completions.create({
        model: 'svc-img',
        messages: [
          { role: 'user', content: 'draw a cat' },
          { role: 'assistant', content: '![a cat](https://example.com/cat.png)' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'the same cat,' },
              { type: 'image_url', image_url: { url: `${probeUrl}/cat.png` } },
              { type: 'text', text: 'but blue' },
            ],
          },
        ],
      });
      expect(links(completion.choices[0]!.message.content!)).toHaveLength(1);
      expect(h.upstream.media.at(-1)!.body.prompt).toBe('the same cat,\nbut blue');
      expect(hits).toBe(0);
    } finally {
      probe.close();
    }
  });

  it('bills only the images delivered when the upstream sends fewer than asked', async () => {
    const member = await h.member();
    const completion = await member.client.chat.completions.create({
      model: 'svc-img',
      messages: [{ role: 'user', content: '#script {"images":1} three pears' }],
      n: 3,
    });
    expect(links(completion.choices[0]!.message.content!)).toHaveLength(1);
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'image', status: 'ok', output_tokens: 1000 });
    expect(Number(row!.unit_quantity)).toBe(1);
    expect(Number(row!.cost_micros)).toBeLessThan(Number(row!.reserved_micros));
  });

  it('refunds in full when the upstream fails, and stores nothing it refuses', async () => {
    const member = await h.member();
    const before = storedFiles().length;
    const usedBefore = await poolUsed(member);
    for (const script of ['{"status":500}', '{"imageBody":"svg"}']) {
      const response = await fetch(`${h.app.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-img', messages: [{ role: 'user', content: `#script ${script} a failing picture` }] }),
      });
      expect(response.status).toBe(502);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ ok: false, code: 'upstream_error', error: { code: 'upstream_error' }, debug: { productModel: 'svc-img', quotaRefunded: true, upstreamHost: 'default' } });
    }
    const error = await member.client.chat.completions
      .create({ model: 'svc-img', messages: [{ role: 'user', content: '#script {"status":503} again' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);

    const rows = await ledgerRows(h.database, member.accountId, 3);
    expect(rows.map((row) => [row.product, row.status, row.cost_micros])).toEqual([
      ['image', 'refunded', '0'],
      ['image', 'refunded', '0'],
      ['image', 'refunded', '0'],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await poolUsed(member)).toBe(usedBefore);
    expect(storedFiles().length).toBe(before);
  });

  it('validates size and n for svc-img (other models forward fields they do not own, see the gateway tests)', async () => {
    const member = await h.member();
    const post = (body: unknown) =>
      fetch(`${h.app.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const requests = h.upstream.stats.requests;
    const cases: [unknown, string][] = [
      [{ model: 'svc-img', messages: [{ role: 'user', content: 'x' }], size: 'huge' }, 'size'],
      [{ model: 'svc-img', messages: [{ role: 'user', content: 'x' }], size: '8192x8192' }, 'size'],
      [{ model: 'svc-img', messages: [{ role: 'user', content: 'x' }], n: 9 }, 'n'],
      [{ model: 'svc-img', messages: [{ role: 'system', content: 'no user here' }] }, 'messages'],
      [{ model: 'svc-img', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }, 'messages[0].content'],
    ];
    for (const [body, param] of cases) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'invalid_request', error: { param } });
    }
    expect(h.upstream.stats.requests).toBe(requests);
  });

  it('size_is_only_for_image_models: size on a model that makes no images is a 400 naming svc-img, not forwarded', async () => {
    const member = await h.member();
    const requests = h.upstream.stats.requests;
    for (const model of ['auto', 'svc-2.1', 'svc-2.1-search']) {
      for (const stream of [false, true]) {
        const refused = await member.client.chat.completions
          .create({ model, messages: [{ role: 'user', content: 'a lighthouse at dusk' }], size: '1024x1024', stream } as ImageChatParams)
          .catch((error: unknown) => error);
        expect(refused, `${model} stream=${stream}`).toBeInstanceOf(OpenAI.BadRequestError);
        const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
        expect(error.code).toBe('invalid_request');
        expect(error.param).toBe('size');
        expect(error.message).toContain(`size is only for svc-img, which makes images; ${model} does not take it.`);
      }
    }
    const raw = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'a lighthouse' }], size: '1024x1024' }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ code: 'invalid_request', stage: 'validation', messageZh: 'size 仅适用于 svc-img（生成图片）；auto 不接受该字段。请去掉 size，或改用 svc-img。' });
    // The Responses API forwards fields it does not read to the chat model: the same rule holds there.
    const responses = await fetch(`${h.app.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', input: 'a lighthouse', size: '512x512' }),
    });
    expect(responses.status).toBe(400);
    expect(await responses.json()).toMatchObject({ code: 'invalid_request', error: { param: 'size' } });
    expect(h.upstream.stats.requests).toBe(requests);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await ledgerRows(h.database, member.accountId, 0)).toEqual([]);

    // svc-img still takes it.
    const made = await member.client.chat.completions.create({ model: 'svc-img', messages: [{ role: 'user', content: 'a lighthouse' }], size: '512x512' } as ImageChatParams);
    expect(links(made.choices[0]!.message.content!)).toHaveLength(1);
  });
});

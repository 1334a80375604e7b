/**
 * The OpenAI Images API on svc-img, `POST /v1/images/generations` (issue 48 item 7), with the openai SDK's
 * `images.generate`: `b64_json` carries exactly the bytes the image server made (nothing stored), `url`
 * svc's own capability link to its stored copy; `n`, `size` (and `auto`), the model defaulting to svc-img,
 * `quality` and `style` passed to the image server. Metered exactly as svc-img through chat is — the same
 * request costs the same — and refunded when the image server fails. Fields svc cannot serve are refused by name.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meteredCost } from '../../../server/metering/pricing.ts';
import { imageOutputTokens } from '../../../server/modules/media/media.tokens.ts';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-images-api-'));
  h = await startHarness({ config: { media: { storage: { kind: 'local', dir } } } });
  m = await h.member({ planPackage: 'pro' });
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

function storedFiles(): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;
}

function post(key: string, body: unknown): Promise<Response> {
  return fetch(`${h.app.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('images.generate', () => {
  it('b64_json, n = 2, a size: the bytes the image server made, nothing stored, one image row billed by area', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const before = storedFiles();
    const prompt = 'A lighthouse at dusk';
    const result = await member.client.images.generate({ model: 'svc-img', prompt, n: 2, size: '512x256' as never, response_format: 'b64_json' });
    const upstream = h.upstream.media.at(-1)!;
    expect(upstream.body).toEqual({ model: 'svc-img', prompt, n: 2, size: '512x256', response_format: 'b64_json' });
    expect(result.created).toBeTypeOf('number');
    expect(result.data).toHaveLength(2);
    for (const [i, image] of result.data!.entries()) {
      expect(Buffer.from(image.b64_json!, 'base64').equals(upstream.produced[i]!)).toBe(true);
      expect(image.revised_prompt).toBe(prompt);
      expect(image.url).toBeUndefined();
    }
    expect(storedFiles()).toBe(before);
    const outputTokens = imageOutputTokens(1000, 512, 256, 2);
    expect(result.usage).toMatchObject({ output_tokens: outputTokens, total_tokens: result.usage!.input_tokens + outputTokens });
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ product: 'image', model: 'svc-img', unit: 'image', unit_quantity: '2.000', output_tokens: outputTokens, input_tokens: result.usage!.input_tokens, status: 'ok' });
    const rates = h.app.app.services.registry.get('svc-img')!.rates;
    expect(Number(row!.cost_micros)).toBe(meteredCost(rates, { inputTokens: row!.input_tokens, outputTokens }));
  });

  it('url (the default): svc capability links that serve exactly those bytes; the model defaults to svc-img, size auto to 1024x1024', async () => {
    const result = await m.client.images.generate({ prompt: 'A paper boat', size: 'auto' });
    const upstream = h.upstream.media.at(-1)!;
    expect(upstream.body).toMatchObject({ model: 'svc-img', n: 1, size: '1024x1024' });
    expect(result.data).toHaveLength(1);
    const url = result.data![0]!.url!;
    expect(url).toMatch(new RegExp(`^${h.app.url}/v1/media/[A-Za-z0-9_-]{22}\\.png$`));
    const served = await fetch(url);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(upstream.produced[0]!)).toBe(true);
  });

  it('quality and style reach the image server; user stays with svc', async () => {
    await m.client.images.generate({ model: 'svc-img', prompt: 'A kite', quality: 'hd', style: 'natural', user: 'u-1', response_format: 'b64_json' });
    expect(h.upstream.media.at(-1)!.body).toEqual({ model: 'svc-img', prompt: 'A kite', n: 1, size: '1024x1024', response_format: 'b64_json', quality: 'hd', style: 'natural' });
  });

  it('costs what the same request through chat costs', async () => {
    const viaChat = await h.member({ planPackage: 'pro' });
    const viaImages = await h.member({ planPackage: 'pro' });
    await viaChat.client.chat.completions.create({ model: 'svc-img', messages: [{ role: 'user', content: 'Two moons' }], n: 2, size: '768x768' } as never);
    await viaImages.client.images.generate({ model: 'svc-img', prompt: 'Two moons', n: 2, size: '768x768' as never });
    const [chatRow] = await ledgerRows(h.database, viaChat.accountId);
    const [imagesRow] = await ledgerRows(h.database, viaImages.accountId);
    const fields = (row: typeof chatRow) => [row!.product, row!.input_tokens, row!.output_tokens, row!.unit, row!.unit_quantity, row!.cost_micros, row!.reserved_micros];
    expect(fields(imagesRow)).toEqual(fields(chatRow));
  });
});

describe('what cannot be served', () => {
  it('an image server failure, or something that is not an image, is refunded', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const failed = await post(member.key, { prompt: '#script {"status":500}' });
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ code: 'upstream_error', debug: { quotaRefunded: true, productModel: 'svc-img' } });
    const svg = await post(member.key, { prompt: '#script {"imageBody":"svg"}', response_format: 'b64_json' });
    expect(svg.status).toBe(502);
    const rows = await ledgerRows(h.database, member.accountId, 2);
    expect(rows.map((row) => [row.product, row.status, row.cost_micros])).toEqual([
      ['image', 'refunded', '0'],
      ['image', 'refunded', '0'],
    ]);
  });

  it('bad requests are 400s naming the field; the SDK raises BadRequestError; another model is refused', async () => {
    const cases: [unknown, string][] = [
      [{}, 'prompt'],
      [{ prompt: '   ' }, 'prompt'],
      [{ prompt: 'x', n: 11 }, 'n'],
      [{ prompt: 'x', size: 'huge' }, 'size'],
      [{ prompt: 'x', size: '8192x8192' }, 'size'],
      [{ prompt: 'x', response_format: 'png' }, 'response_format'],
      [{ prompt: 'x', quality: 'ultra' }, 'quality'],
      [{ prompt: 'x', stream: true }, 'stream'],
      [{ prompt: 'x', partial_images: 2 }, 'partial_images'],
      [{ prompt: 'x', mask: 'abc' }, 'mask'],
      [{ prompt: 'x', model: 'svc-2.1' }, 'model'],
    ];
    for (const [body, param] of cases) {
      const reply = await post(m.key, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(((await reply.json()) as { error: { param: string } }).error.param, JSON.stringify(body)).toBe(param);
    }
    const sdk = await m.client.images.generate({ model: 'svc-img', prompt: 'x', n: 20 }).catch((error: unknown) => error);
    expect(sdk).toBeInstanceOf(OpenAI.BadRequestError);
    const unknown = await post(m.key, { prompt: 'x', model: 'dall-e-3' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'model_not_found' });
  });
});

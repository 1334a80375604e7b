/**
 * The image executor: `svc-img` through `POST /v1/chat/completions` (DESIGN §8.5) and through the OpenAI
 * Images API, `POST /v1/images/generations` (`image.request.ts`), over the metering pipeline. Through chat
 * the last user message is the prompt (its text parts only: images sent in messages are never fetched);
 * `size` and `n` come from the request. svc asks the image upstream (`/images/generations`, with fallback
 * as for chat) for `b64_json`. A chat reply stores each image (`media.store`) and answers with one Markdown
 * link per image, `![<prompt, shortened>](<base_url>/v1/media/<id>.<ext>)` — as a chat completion, or for
 * `stream: true` as one content chunk framed like any chat stream. The Images API answers
 * `{created, data: [{url | b64_json, revised_prompt?}], usage}`: `url` is svc's stored copy (the same
 * capability URL), `b64_json` the bytes themselves (nothing is stored).
 *
 * Billing, the same on both: input = the prompt's tokens; output = `media.imageOutputTokens` per 1024×1024
 * image scaled by the requested size, times the images delivered, with `unit: {kind: 'image'}`. Reserved
 * at n × size before the upstream call; a failure before the reply is refunded in full.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../config/config.ts';
import { AppError } from '../../errors/app-error.ts';
import { writeRawHead, type Exchange, type Executor, type HttpReply, type TurnPlan } from '../../metering/executor.ts';
import { costStamp, type CostStamp } from '../../metering/pricing.ts';
import { costHeaders, serverTiming, type Metered, type Turn } from '../../metering/turn.ts';
import { UpstreamFailure } from '../../metering/upstream-failure.ts';
import type { ChatBody, ChatMessage } from '../gateway/chat.validate.ts';
import { TokenEstimate, tokenizer } from '../gateway/token-estimate.ts';
import { dispatch } from '../model/dispatch.ts';
import type { ModelRegistry, RoutedModel } from '../model/model.registry.ts';
import { rateLimitHeaders } from '../../rate-limit/rate-limit.service.ts';
import { defaultImageSize, maxImagePromptChars, parseImagesRequest } from './image.request.ts';
import type { MediaService } from './media.service.ts';
import { imageOutputTokens, parseImageSize } from './media.tokens.ts';
import { sniffImage, type MediaExt } from './media.types.ts';

export const imageModelId = 'svc-img';

const minSide = 64;
const maxSide = 4096;
/** Longest alt text of a link: enough to tell images apart in a conversation. */
const altChars = 80;
/** Most bytes one image may take in the upstream's JSON (base64 of a 4096×4096 PNG fits well within). */
const maxImageJsonBytes = 64 * 1024 * 1024;

/** How the images are answered: a chat completion of Markdown links, or the Images API's list. */
type ImageAnswer = { api: 'chat'; stream: boolean; includeUsage: boolean } | { api: 'images'; format: 'url' | 'b64_json' };

export interface ImageCall {
  model: RoutedModel;
  prompt: string;
  n: number;
  size: { width: number; height: number };
  sizeText: string;
  /** Fields passed to the image server as asked (the Images API's `quality`, `style`, …). */
  options: Record<string, unknown>;
  answer: ImageAnswer;
}

/** One image as the upstream made it. */
interface Made {
  bytes: Buffer;
  ext: MediaExt;
  revisedPrompt: string | null;
}

export class ImageExecutor implements Executor<ImageCall> {
  readonly #registry: ModelRegistry;
  readonly #media: MediaService;
  readonly #tokensPerImage: number;

  constructor(config: Config, registry: ModelRegistry, media: MediaService) {
    this.#registry = registry;
    this.#media = media;
    this.#tokensPerImage = config.media.imageOutputTokens;
  }

  /** Plans a validated chat request for svc-img: the prompt, size and n, and the worst case. */
  planFromChat(body: ChatBody): TurnPlan<ImageCall> {
    const stream = body.stream === true;
    const answer: ImageAnswer = { api: 'chat', stream, includeUsage: stream && body.stream_options?.include_usage === true };
    return this.#plan(this.#registry.get(body.model)!, promptOf(body.messages), body.n ?? 1, body.size ?? defaultImageSize, {}, answer);
  }

  /** Plans a `POST /v1/images/generations` body; `unknownModel` is the 404 for an id that does not exist. */
  planFromImagesApi(raw: unknown, unknownModel: (id: string) => AppError): TurnPlan<ImageCall> {
    const request = parseImagesRequest(raw);
    const id = request.model ?? imageModelId;
    const model = this.#registry.get(id);
    if (!model) throw unknownModel(id);
    if (model.resolvedId !== imageModelId) throw new AppError('invalid_request', `${model.id} does not make images; use ${imageModelId} on this endpoint.`, { param: 'model' });
    return this.#plan(model, request.prompt, request.n, request.size, request.options, { api: 'images', format: request.format });
  }

  #plan(model: RoutedModel, prompt: string, n: number, sizeText: unknown, options: Record<string, unknown>, answer: ImageAnswer): TurnPlan<ImageCall> {
    const size = typeof sizeText === 'string' ? parseImageSize(sizeText) : null;
    if (!size || size.width < minSide || size.height < minSide || size.width > maxSide || size.height > maxSide) {
      throw new AppError('invalid_request', `size must be "<width>x<height>" with each side from ${minSide} to ${maxSide} pixels, e.g. "1024x1024" or "1536x1024".`, {
        param: 'size',
      });
    }
    if (model.deployments.length === 0) {
      throw new AppError('upstream_unavailable', `No image server is configured for ${model.id}: set SVC_UPSTREAM_URL, or models.${model.id}.deployments in the config file.`, {
        stage: 'routing',
        debug: { productModel: model.id },
      });
    }
    return {
      executor: this,
      product: 'image',
      model,
      // Not a long-lived reply: no stream slot, whatever the framing.
      stream: false,
      // A token is at least one byte.
      worstCase: { inputTokens: Buffer.byteLength(prompt), outputTokens: imageOutputTokens(this.#tokensPerImage, size.width, size.height, n) },
      call: { model, prompt, n, size, sizeText: sizeText as string, options, answer },
    };
  }

  async execute(turn: Turn, call: ImageCall, exchange: Exchange): Promise<void> {
    const response = await dispatch(turn, call.model.deployments, exchange.signal, {
      endpoint: '/images/generations',
      body: (deployment) => JSON.stringify({ ...call.options, model: deployment.model, prompt: call.prompt, n: call.n, size: call.sizeText, response_format: 'b64_json' }),
    });
    const images = decodeImages(await readJson(response.body, maxImageJsonBytes * call.n), call.n);
    const upstreamMs = performance.now() - turn.upstreamFrom;
    const promptTokens = Math.min(new TokenEstimate(await tokenizer()).count(call.prompt), turn.worstCase.inputTokens);
    const produced: Metered = {
      inputTokens: promptTokens,
      outputTokens: imageOutputTokens(this.#tokensPerImage, call.size.width, call.size.height, images.length),
      unit: { kind: 'image', quantity: images.length },
    };
    const links = call.answer.api === 'images' && call.answer.format === 'b64_json' ? null : await this.#store(images, turn, call);
    // Made (and kept): a client that leaves now is billed for them.
    turn.metered = produced;
    const reply = exchange.reply!;
    const headers = {
      'x-svc-request-id': turn.traceId,
      'x-request-id': turn.traceId,
      'server-timing': serverTiming(turn, upstreamMs),
      ...(turn.rate ? rateLimitHeaders(turn.rate) : {}),
      ...costHeaders(turn),
    };
    turn.output = true;
    // Everything below writes the reply at once.
    await exchange.finishing?.(turn);
    if (call.answer.api === 'images') {
      const data = images.map((image, i) => ({ ...(links ? { url: links[i]! } : { b64_json: image.bytes.toString('base64') }), ...(image.revisedPrompt === null ? {} : { revised_prompt: image.revisedPrompt }) }));
      const usage = { input_tokens: produced.inputTokens, output_tokens: produced.outputTokens, total_tokens: produced.inputTokens + produced.outputTokens, input_tokens_details: { text_tokens: produced.inputTokens, image_tokens: 0 } };
      reply.headers(headers).type('application/json').send(JSON.stringify({ created: Math.floor(Date.now() / 1000), data, usage }));
      return;
    }
    answerInChat(reply, headers, call, links!, produced, costStamp(turn));
  }

  /** Each image kept under a capability URL; a storage failure is refunded (the images are not delivered). */
  async #store(images: Made[], turn: Turn, call: ImageCall): Promise<string[]> {
    try {
      return await Promise.all(images.map(async (image) => (await this.#media.store(image.bytes, { ext: image.ext })).url));
    } catch (error) {
      throw new AppError('service_unavailable', 'The images were made but could not be stored; try again shortly. Your quota for this turn was refunded.', {
        cause: error,
        debug: { productModel: call.model.id, upstreamHost: turn.deployment, quotaRefunded: true },
      });
    }
  }
}

/** The links as a chat completion, or for `stream: true` as one content chunk, the finish, the usage chunk if asked for, and [DONE]. */
function answerInChat(reply: HttpReply, headers: Record<string, string>, call: ImageCall, links: string[], produced: Metered, cost: CostStamp | null): void {
  const answer = call.answer as Extract<ImageAnswer, { api: 'chat' }>;
  const alt = altText(call.prompt);
  const content = links.map((url) => `![${alt}](${url})`).join('\n\n');
  const usage = { prompt_tokens: produced.inputTokens, completion_tokens: produced.outputTokens, total_tokens: produced.inputTokens + produced.outputTokens };
  const id = `chatcmpl-${randomBytes(12).toString('base64url')}`;
  const created = Math.floor(Date.now() / 1000);
  const model = call.model.resolvedId;
  if (!answer.stream) {
    const message = { role: 'assistant', content, refusal: null };
    reply.headers(headers).type('application/json').send(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, logprobs: null, finish_reason: 'stop' }], usage }));
    return;
  }
  // CONFORMANCE "Streaming".
  const chunk = (choices: unknown[], extra: Record<string, unknown> = answer.includeUsage ? { usage: null } : {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
  let text = chunk([{ index: 0, delta: { role: 'assistant', content }, logprobs: null, finish_reason: null }]);
  text += chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
  // A stream's usage chunk says what svc billed, as `x-svc-cost` does on a whole reply.
  if (answer.includeUsage) text += chunk([], { usage: cost ? { ...usage, cost } : usage });
  text += 'data: [DONE]\n\n';
  writeRawHead(reply, 200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  reply.raw.end(text);
}

/** The prompt: the text of the last user message. Image and other non-text parts are ignored, never fetched. */
export function promptOf(messages: readonly ChatMessage[]): string {
  let index = messages.length - 1;
  while (index >= 0 && messages[index]!.role !== 'user') index--;
  if (index < 0) throw new AppError('invalid_request', 'svc-img needs a user message: its text is the image prompt.', { param: 'messages' });
  const content = messages[index]!.content;
  const text =
    typeof content === 'string'
      ? content
      : (content as { type?: string; text?: string }[])
          .filter((part) => part.type === 'text')
          .map((part) => part.text)
          .join('\n');
  const param = `messages[${index}].content`;
  if (text.trim() === '') throw new AppError('invalid_request', 'The last user message must describe the image in text.', { param });
  if (text.length > maxImagePromptChars) throw new AppError('invalid_request', `An image prompt may be at most ${maxImagePromptChars} characters.`, { param });
  return text;
}

/** The prompt as a link's alt text: one line, Markdown brackets escaped, cut at a word near `altChars`. */
export function altText(prompt: string): string {
  let text = prompt.replace(/\s+/g, ' ').trim();
  if ([...text].length > altChars) {
    const cut = [...text].slice(0, altChars).join('');
    const space = cut.lastIndexOf(' ');
    text = `${(space > altChars / 2 ? cut.slice(0, space) : cut).replace(/[\s.,;:!?-]+$/, '')}…`;
  }
  return text.replace(/[\\[\]]/g, (char) => `\\${char}`);
}

/** The upstream's JSON body, refusing one larger than `limit` bytes. */
async function readJson(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<unknown> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of body) {
    size += part.length;
    if (size > limit) {
      body.destroy();
      throw new UpstreamFailure('upstream_error', 'The image server sent an oversized response.', 200);
    }
    parts.push(part);
  }
  try {
    return JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch (error) {
    throw new UpstreamFailure('upstream_error', 'The image server sent an invalid response.', 200, error);
  }
}

/** `{data: [{b64_json, revised_prompt?}]}` → the images, each a PNG, JPEG, WebP or GIF by its bytes; at most `n`. */
function decodeImages(json: unknown, n: number): Made[] {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length === 0) throw new UpstreamFailure('upstream_error', 'The image server sent no images.', 200);
  return data.slice(0, n).map((item: { b64_json?: unknown; revised_prompt?: unknown }) => {
    if (typeof item?.b64_json !== 'string') throw new UpstreamFailure('upstream_error', 'The image server sent an image without b64_json.', 200);
    const bytes = Buffer.from(item.b64_json, 'base64');
    // By the bytes, never a claimed type: anything but a raster image (SVG, HTML) would be served from our origin.
    const type = sniffImage(bytes);
    if (!type) throw new UpstreamFailure('upstream_error', 'The image server sent something that is not a PNG, JPEG, WebP or GIF image.', 200);
    return { bytes, ext: type.ext, revisedPrompt: typeof item.revised_prompt === 'string' && item.revised_prompt !== '' ? item.revised_prompt : null };
  });
}

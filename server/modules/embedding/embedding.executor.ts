/**
 * The embedding executor: `POST /v1/embeddings` (OpenAI's embeddings API) over the metering pipeline, for
 * models of `kind: embedding` in the config (none by default: the operator declares one, e.g. `svc-embed`,
 * with a deployment or under `SVC_UPSTREAM_URL`). The request (`embedding.request.ts`) goes to the model's
 * deployments' `POST /embeddings` (fallback as for chat), always asking for floats; svc answers in the
 * format the client asked for — `float`, or `base64` (little-endian float32, as OpenAI sends it: what the
 * openai SDK asks for by default and decodes).
 *
 * Billing: input tokens only, at the model's input price and from its class's pools; reserved before the
 * call at the inputs' bound (a token is at least a byte, plus each input's special tokens), settled at the
 * upstream's `usage.prompt_tokens`, or counted by svc's tokenizer when it sent none (the row is then
 * `estimated`). A failure before the reply is refunded in full.
 */
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { Exchange, Executor, TurnPlan } from '../../metering/executor.ts';
import { costHeaders, serverTiming, type Metered, type Turn } from '../../metering/turn.ts';
import { UpstreamFailure } from '../../metering/upstream-failure.ts';
import { estimateTokens } from '../gateway/token-count.ts';
import { dispatchText } from '../model/dispatch.ts';
import { forwards, type Deployment, type ModelRegistry, type RoutedModel } from '../model/model.registry.ts';
import { rateLimitHeaders } from '../../rate-limit/rate-limit.service.ts';
import { parseEmbeddingRequest, type EmbeddingRequest } from './embedding.request.ts';

export interface EmbeddingCall {
  model: RoutedModel;
  request: EmbeddingRequest;
}

/** What the pipeline's planner needs besides the body: names that stand for models, and the 404 for an unknown one. */
export interface EmbeddingLookup {
  resolve(model: string): string;
  unknownModel(model: string): AppError;
}

export class EmbeddingExecutor implements Executor<EmbeddingCall> {
  readonly #registry: ModelRegistry;
  /** The configured embedding models, for the messages that name them. */
  readonly #ids: readonly string[];

  constructor(registry: ModelRegistry, embeddingIds: readonly string[]) {
    this.#registry = registry;
    this.#ids = embeddingIds;
  }

  /** Validates a request body and routes it to an embedding model. */
  plan(raw: unknown, lookup: EmbeddingLookup): TurnPlan<EmbeddingCall> {
    const request = parseEmbeddingRequest(raw);
    if (this.#ids.length === 0) throw noEmbeddingModel();
    const model = this.#registry.get(lookup.resolve(request.model));
    if (!model) throw lookup.unknownModel(request.model);
    if (!model.embedding) {
      const message = bilingual('{model} is a chat model: it makes no embeddings. Use an embedding model: {ids}.', '{model} 是对话模型，不能生成向量嵌入。请改用向量嵌入模型：{ids}。', { model: model.id, ids: this.#ids.join(', ') });
      throw new AppError('invalid_request', message, { param: 'model', debug: { productModel: model.id } });
    }
    if (model.deployments.length === 0) throw notConfigured(model);
    return {
      executor: this,
      product: 'embedding',
      model,
      stream: false,
      worstCase: { inputTokens: request.tokenBound, outputTokens: 0 },
      call: { model, request },
    };
  }

  async execute(turn: Turn, call: EmbeddingCall, exchange: Exchange): Promise<void> {
    const { request } = call;
    const response = await dispatchText(turn, call.model.deployments, exchange.signal, { endpoint: '/embeddings', body: (deployment) => upstreamBody(request, deployment) });
    if (response.bodyError !== null) {
      if (exchange.signal.aborted) throw response.bodyError;
      throw new UpstreamFailure('upstream_error', 'The embedding server sent an invalid response.', 200, response.bodyError);
    }
    const upstreamMs = performance.now() - turn.upstreamFrom;
    const { vectors, usage } = readEmbeddings(response.text, request.inputs.length);
    const promptTokens = saneTokens(usage, turn.worstCase.inputTokens);
    turn.metered = promptTokens !== null ? { inputTokens: promptTokens, outputTokens: 0 } : await this.measure(turn, call);
    const data = vectors.map((vector, index) => ({ object: 'embedding', index, embedding: request.encoding === 'base64' ? base64Floats(vector) : vector }));
    const tokens = turn.metered.inputTokens;
    turn.output = true;
    await exchange.finishing?.(turn);
    exchange
      .reply!.headers(turn.rate ? rateLimitHeaders(turn.rate) : {})
      .headers(costHeaders(turn))
      .header('server-timing', serverTiming(turn, upstreamMs))
      .type('application/json')
      .send(JSON.stringify({ object: 'list', data, model: call.model.resolvedId, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  }

  /**
   * The inputs' tokens by svc's tokenizer (token-id inputs: their length), within the bound: when the upstream
   * reported none, or the client left while it worked (billed as chat is: what was asked for was being made).
   */
  async measure(turn: Turn, call: EmbeddingCall): Promise<Metered> {
    // One estimate over the text inputs, in turn, in the counting worker.
    const texts: string[] = [];
    let tokens = 0;
    for (const input of call.request.inputs) {
      if (typeof input === 'string') texts.push(input);
      else tokens += input.length;
    }
    if (texts.length > 0) for (const count of (await estimateTokens([texts]))[0]!) tokens += count;
    turn.estimated = true;
    return { inputTokens: Math.min(tokens, turn.worstCase.inputTokens), outputTokens: 0 };
  }

  describeWorstCase(call: EmbeddingCall) {
    const count = call.request.inputs.length;
    return {
      en: `its ${count} input${count === 1 ? '' : 's'} may count up to ${call.request.tokenBound} tokens; send fewer or shorter inputs`,
      zh: `其 ${count} 条输入最多可能计 ${call.request.tokenBound} 个 token；请减少或缩短输入`,
    };
  }
}

/** The request for one deployment: always floats (what every embedding server speaks); fields svc does not own as its policy allows. */
function upstreamBody(request: EmbeddingRequest, deployment: Deployment): string {
  const body: Record<string, unknown> = {};
  for (const field in request.extra) if (deployment.forward === null || forwards(deployment.forward, field)) body[field] = request.extra[field];
  Object.assign(body, { model: deployment.model, input: request.input, encoding_format: 'float' });
  if (request.dimensions !== undefined) body.dimensions = request.dimensions;
  return JSON.stringify(body);
}

/** No model of `kind: embedding` in the config: what the operator sets, not "retry". */
function noEmbeddingModel(): AppError {
  const message = {
    en: 'No embedding model is configured on this server, so it cannot make embeddings (retrying will not help): the operator adds one to the config file under models — an entry with kind: embedding, its tier and inputPrice, and deployments (or SVC_UPSTREAM_URL set) — and restarts svc. Nothing was billed.',
    zh: '本服务器未配置向量嵌入模型，因此无法生成向量嵌入（重试也无济于事）：需由运维人员在配置文件的 models 下添加一个 kind: embedding 的模型（写明 tier、inputPrice 和 deployments，或设置 SVC_UPSTREAM_URL），然后重启 svc。本次未计费。',
  };
  return new AppError('upstream_not_configured', message, { stage: 'routing', param: 'model' });
}

function notConfigured(model: RoutedModel): AppError {
  const message = bilingual(
    'No embedding server is configured for {model} (retrying will not help): the operator sets models.{configured}.deployments in the config file, or SVC_UPSTREAM_URL to a server that answers POST /embeddings, and restarts svc. Nothing was billed.',
    '{model} 尚未配置向量嵌入服务器（重试也无济于事）：需由运维人员在配置文件中设置 models.{configured}.deployments，或将 SVC_UPSTREAM_URL 设为支持 POST /embeddings 的服务器，然后重启 svc。本次未计费。',
    { model: model.id, configured: model.resolvedId },
  );
  return new AppError('upstream_not_configured', message, { stage: 'routing', debug: { productModel: model.id } });
}

/** The upstream's reply: one vector per input, in input order, and its usage object (if any). */
function readEmbeddings(text: string, count: number): { vectors: number[][]; usage: unknown } {
  let json: { data?: unknown; usage?: unknown } | null;
  try {
    json = JSON.parse(text) as typeof json;
  } catch (error) {
    throw new UpstreamFailure('upstream_error', 'The embedding server sent an invalid response.', 200, error);
  }
  const data = json?.data;
  if (!Array.isArray(data) || data.length !== count) {
    const message = `The embedding server sent ${Array.isArray(data) ? data.length : 'no'} embeddings for ${count} inputs.`;
    throw new UpstreamFailure('upstream_error', message, 200, undefined, { clientMessage: `${message} Nothing was billed.` });
  }
  const vectors: number[][] = new Array<number[]>(count);
  data.forEach((item: { index?: unknown; embedding?: unknown } | null, position) => {
    const index = typeof item?.index === 'number' ? item.index : position;
    const vector = vectorOf(item?.embedding);
    if (!Number.isInteger(index) || index < 0 || index >= count || vectors[index] !== undefined || vector === null) {
      const message = 'The embedding server sent an embedding that is not a list of numbers, or two for one input.';
      throw new UpstreamFailure('upstream_error', message, 200, undefined, { clientMessage: `${message} Nothing was billed.` });
    }
    vectors[index] = vector;
  });
  return { vectors, usage: json?.usage };
}

/** An embedding as numbers: a JSON array of finite numbers, or base64 float32 (a server that ignored `encoding_format`). */
function vectorOf(embedding: unknown): number[] | null {
  if (Array.isArray(embedding)) return embedding.length > 0 && embedding.every((x) => typeof x === 'number' && Number.isFinite(x)) ? (embedding as number[]) : null;
  if (typeof embedding !== 'string') return null;
  const bytes = Buffer.from(embedding, 'base64');
  if (bytes.length === 0 || bytes.length % 4 !== 0) return null;
  const vector: number[] = [];
  for (let at = 0; at < bytes.length; at += 4) vector.push(bytes.readFloatLE(at));
  return vector.every(Number.isFinite) ? vector : null;
}

/** A vector as OpenAI's `base64` encoding: little-endian float32. */
function base64Floats(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return bytes.toString('base64');
}

/** `usage.prompt_tokens` when it is a count within the bound; null when it must be counted instead. */
function saneTokens(usage: unknown, bound: number): number | null {
  const tokens = (usage as { prompt_tokens?: unknown } | null | undefined)?.prompt_tokens;
  return Number.isSafeInteger(tokens) && (tokens as number) >= 0 && (tokens as number) <= bound ? (tokens as number) : null;
}

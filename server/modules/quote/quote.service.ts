/**
 * Quotes (issue 51): what a request would reserve and cost at most, before it is sent, without calling the
 * upstream. The body goes through the endpoint's own planner — the same validation (and errors), the same
 * output clamp to the model's limit, the same worst case — and the pipeline's `reservation`, which makes the
 * checks admission starts with (plan, key allow-list) and prices the worst case as admission reserves it.
 * Then the payer's pools and the key's spend caps as they stand (what the key has spent or holds, whichever
 * source paid): whether they could take it now, and the key's refusal — the same 402 the request would get.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../../authz/principal.ts';
import type { PoolWindow } from '../../config/config.ts';
import { money, type Money } from '../../config/money.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { PackageEntitlements } from '../../metering/entitlements.ts';
import type { HttpRequest, TurnPlan } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import { keyBudgetError } from '../../metering/admission.ts';
import { keyCapWindows, type KeyCapWindow, type PoolStore } from '../../metering/pool.store.ts';
import { priceBreakdown } from '../../metering/pricing.ts';
import type { PoolWindows } from '../../metering/windows.ts';
import type { ChatSurface } from '../gateway/chat.surface.ts';
import type { MessagesSurface } from '../gateway/messages.surface.ts';
import type { ResponsesSurface } from '../gateway/responses.surface.ts';
import { maxTokensHeader } from '../gateway/output-cap.ts';

const quoteEndpoints = ['chat.completions', 'messages', 'responses'] as const;
export type QuoteEndpoint = (typeof quoteEndpoints)[number];

export interface PoolFit {
  window: PoolWindow;
  limit: Money;
  used: Money;
  remaining: Money;
  fits: boolean;
}

export interface Quote {
  endpoint: QuoteEndpoint;
  model: string;
  routedModel: string;
  class: string;
  stream: boolean;
  /** The worst case reserved: prompt bound (request bytes) and output bound (n × the output cap). */
  worstCase: { inputTokens: number; outputTokens: number };
  /** The output cap the request is served with, when it asked for more than the model allows (clamped). */
  maxTokensClampedTo: number | null;
  /** What admission reserves against every window of the class, and the most the request can cost. */
  reservation: Money;
  /** The worst case priced line by line (tokens × price), by the pricing code that bills. */
  lines: { tokenClass: 'input' | 'output'; tokens: number; pricePerMillion: Money; listPricePerMillion: Money; promotionBasisPoints: number }[];
  /** The payer's pools of the class right now (running reservations included). */
  pools: PoolFit[];
  /** The key's own spend caps, when the credential is a key that has them, with what it has spent or holds. */
  keyCaps: KeyCapFit[];
  /**
   * The error the request would get from the key's spend caps as they stand (code, status, both messages,
   * details: the real request's), or null. It is what the request gets unless the pools refuse it first.
   */
  keyCapRefusal: QuoteRefusal | null;
  /** The pools and the key's caps (as they stand) could take the reservation now. */
  fits: boolean;
}

export interface KeyCapFit {
  window: KeyCapWindow;
  limit: Money;
  /** Spent or held now (running requests' worst cases included), paid from pools or credit. */
  used: Money;
  remaining: Money;
  fits: boolean;
}

export interface QuoteRefusal {
  code: string;
  status: number;
  message: string;
  messageZh: string;
  details: Record<string, unknown>;
}

/** A response stand-in for the planners: they say on it what they changed (the output clamp), and it keeps that. */
function noteTaker(): { response: ServerResponse; notes: Map<string, string> } {
  const notes = new Map<string, string>();
  const response = { headersSent: false, setHeader: (name: string, value: string) => notes.set(name.toLowerCase(), String(value)) };
  return { response: response as unknown as ServerResponse, notes };
}

export class QuoteService {
  readonly #pipeline: MeteringPipeline;
  readonly #surfaces: { chat: ChatSurface; messages: MessagesSurface; responses: ResponsesSurface };
  readonly #store: PoolStore;
  readonly #windows: PoolWindows;
  readonly #entitlements: PackageEntitlements;
  readonly #log: FastifyBaseLogger;

  constructor(
    deps: { pipeline: MeteringPipeline; chat: ChatSurface; messages: MessagesSurface; responses: ResponsesSurface; store: PoolStore; windows: PoolWindows; entitlements: PackageEntitlements; log: FastifyBaseLogger },
  ) {
    this.#pipeline = deps.pipeline;
    this.#surfaces = { chat: deps.chat, messages: deps.messages, responses: deps.responses };
    this.#store = deps.store;
    this.#windows = deps.windows;
    this.#entitlements = deps.entitlements;
    this.#log = deps.log;
  }

  /** Quotes `body` as `endpoint` would receive it from `principal` (at `ip`). */
  async quote(principal: Principal, endpoint: unknown, body: unknown, ip: string): Promise<Quote> {
    if (typeof endpoint !== 'string' || !(quoteEndpoints as readonly string[]).includes(endpoint)) {
      throw new AppError('invalid_request', bilingual('endpoint must be one of {endpoints}.', 'endpoint 必须是 {endpoints} 之一。', { endpoints: quoteEndpoints.join(', ') }), { param: 'endpoint' });
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new AppError('invalid_request', bilingual('body must be the request body as a JSON object.', 'body 必须是 JSON 对象形式的请求体。'), { param: 'body' });
    }
    const { response, notes } = noteTaker();
    // The planners take what they are given apart: a copy, so the caller's object stays as it was.
    // Its size as a client sends it (JSON.stringify, as the SDKs do): the chat endpoint's prompt bound.
    const headers = { 'content-length': String(Buffer.byteLength(JSON.stringify(body))) };
    const request: HttpRequest = { id: 'quote', ip, headers, body: structuredClone(body), log: this.#log };
    const planned = await this.#plan(endpoint as QuoteEndpoint, request, principal, response);
    const reservation = this.#pipeline.reservation(principal, planned);
    const { model, worstCase, reservedMicros } = reservation;
    const currency = model.rates.currency;
    const amount = (micros: number) => money(micros, currency);
    const breakdown = priceBreakdown(model.rates, worstCase, reservedMicros);
    const limits = this.#entitlements.of(principal.payer.package).pools[model.class];
    const windows = this.#windows.current();
    const unavailable = (error: unknown): never => {
      throw new AppError('service_unavailable', 'Usage is unavailable right now (the pool store did not answer); try again shortly.', { cause: error });
    };
    const used = await this.#store.read(principal.payer.id, windows).catch(unavailable);
    const pools = used
      .filter((pool) => pool.class === model.class)
      .map(({ window, usedMicros }) => ({
        window,
        limit: amount(limits[window]),
        used: amount(usedMicros),
        remaining: amount(Math.max(0, limits[window] - usedMicros)),
        fits: usedMicros + reservedMicros <= limits[window],
      }));
    const keyLimits = principal.credential.limits;
    const caps = { day: keyLimits?.budgetDayMicros ?? null, month: keyLimits?.budgetMonthMicros ?? null };
    const keyCaps: KeyCapFit[] = [];
    let keyCapRefusal: QuoteRefusal | null = null;
    if (caps.day !== null || caps.month !== null) {
      const keyId = principal.credential.id;
      const spent = await (this.#store.readKeyCap?.(keyId, principal.payer.id, windows) ?? Promise.resolve({ day: 0, month: 0 })).catch(unavailable);
      for (const window of keyCapWindows) {
        const limit = caps[window];
        if (limit === null) continue;
        const fits = spent[window] + reservedMicros <= limit;
        keyCaps.push({ window, limit: amount(limit), used: amount(spent[window]), remaining: amount(Math.max(0, limit - spent[window])), fits });
        // The store checks day, then month: the first that refuses is the one the request hears about.
        if (!fits && !keyCapRefusal) {
          const error = keyBudgetError(currency, windows, { ok: false, reason: 'key_budget', window, usedMicros: spent[window], limitMicros: limit }, keyId, reservedMicros, model.id);
          keyCapRefusal = { code: error.code, status: error.status, message: error.message, messageZh: error.messageZh, details: error.options.details ?? {} };
        }
      }
    }
    const clamped = notes.get(maxTokensHeader);
    return {
      endpoint: endpoint as QuoteEndpoint,
      model: model.id,
      routedModel: model.resolvedId,
      class: model.class,
      stream: reservation.stream,
      worstCase: { inputTokens: worstCase.inputTokens, outputTokens: worstCase.outputTokens },
      maxTokensClampedTo: clamped === undefined ? null : Number(clamped),
      reservation: amount(reservedMicros),
      lines: breakdown.lines.map((line) => ({
        tokenClass: line.tokenClass,
        tokens: line.tokens,
        pricePerMillion: amount(line.pricePerMillion),
        listPricePerMillion: amount(line.listPerMillion),
        promotionBasisPoints: line.discountBasisPoints,
      })),
      pools,
      keyCaps,
      keyCapRefusal,
      fits: pools.every((pool) => pool.fits) && keyCapRefusal === null,
    };
  }

  #plan(endpoint: QuoteEndpoint, request: HttpRequest, principal: Principal, response: ServerResponse): TurnPlan<unknown, unknown> | Promise<TurnPlan<unknown, unknown>> {
    switch (endpoint) {
      case 'chat.completions':
        return this.#surfaces.chat.plan(request, principal, response);
      case 'messages':
        return this.#surfaces.messages.plan(request, principal, response);
      case 'responses':
        return this.#surfaces.responses.plan(request, principal, response);
    }
  }
}

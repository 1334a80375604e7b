/**
 * The one metering pipeline every product runs through (DESIGN §2, STYLE §8):
 *
 *   authenticate → plan (the surface validates and routes: executor, model, worst case)
 *   → admit (rate limits + stream cap + reservation: one atomic step) → execute (the product's executor)
 *   → settle (in `finally`, off the critical path: actual cost, ledger row, pools)
 *
 * No ORM unit of work, no GraphQL. A failure before any output is refunded in full, and the refund is
 * written before the error is (`debug.quotaRefunded`); a client that leaves is billed for what was produced;
 * a stream checkpoints what it has delivered (at its first token, then every second) so a crash bills that. `serve` is for HTTP surfaces (the executor writes the
 * reply); `run` is for callers that want the executor's output (MCP tools).
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import { EventEmitter } from 'node:events';
import type { Config } from '../config/config.ts';
import { AppError, bilingual } from '../errors/app-error.ts';
import { errorCodes } from '../errors/codes.ts';
import { newRequestId } from '../infra/request-id.ts';
import type { BearerClient, CredentialAudience, Principal } from '../authz/principal.ts';
import type { PackageEntitlements } from './entitlements.ts';
import { Admission } from './admission.ts';
import type { CreditPayment } from './credit-payment.ts';
import { Checkpointer } from './checkpoints.ts';
import type { ClientSignal, HttpReply, HttpRequest, TurnPlan } from './executor.ts';
import { channels, type LedgerEntry } from './ledger.ts';
import type { PoolStore } from './pool.store.ts';
import { meteredCost, turnCost } from './pricing.ts';
import type { CreditHold, Settlement } from './settlement.ts';
import type { Metered, Turn } from './turn.ts';
import { classifyUpstreamError } from './upstream-failure.ts';
import type { PoolWindows } from './windows.ts';

/** Raised when the client goes away; `aborted` is checked the way an AbortSignal's would be. */
class ClientAbort extends EventEmitter implements ClientSignal {
  aborted = false;
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/** 403 for a model outside the key's own allow-list (issue 51): names the key's limit and what it allows. */
function keyModelNotAllowed(modelId: string, allowed: readonly string[]): AppError {
  return new AppError(
    'key_model_not_allowed',
    bilingual(
      "This API key may not call {model}: its model allow-list is {allowed}. Use one of those, or ask the key's owner to add the model.",
      '该 API 密钥不能调用 {model}：其模型允许列表为 {allowed}。请改用其中之一，或请密钥所有者添加此模型。',
      { model: JSON.stringify(modelId), allowed: allowed.join(', ') },
    ),
    { param: 'model', debug: { productModel: modelId }, details: { keyLimit: 'allowed_models', allowedModels: allowed } },
  );
}

const never: ClientSignal = { aborted: false, once: () => undefined, off: () => undefined };

export interface PipelineDeps {
  config: Config;
  /** `client.ip`: the request's address (organisation keys may be limited to some); `client.audience`: see `serve`. */
  authenticate(authorization: string | undefined, client?: BearerClient): Promise<Principal>;
  /** The same for a credential in a cache, at once; null when `authenticate` must look. */
  authenticateCached?(authorization: string | undefined, client?: BearerClient): Principal | null;
  entitlements: PackageEntitlements;
  store: PoolStore;
  windows: PoolWindows;
  settlement: Settlement;
  /** Prepaid credit, for payers who opted to pay with it once their pools are exhausted. */
  credit?: CreditPayment;
  log: Logger;
}

/** Where a turn came from: the caller's address and the request id it sees. */
export interface TurnOrigin {
  ip: string;
  traceId: string;
  /** What the client sent as `x-svc-request-id`, if anything. */
  clientRequestId: string | null;
}

export class MeteringPipeline {
  readonly authenticate: (authorization: string | undefined, client?: BearerClient) => Promise<Principal>;
  readonly #authenticateCached: (authorization: string | undefined, client?: BearerClient) => Principal | null;
  readonly admission: Admission;
  readonly checkpoints: Checkpointer;
  /** How long a turn may last: it must settle before its reservation can be swept (see the constructor). */
  readonly turnLimitMs: number;
  readonly #entitlements: PackageEntitlements;
  readonly #settlement: Settlement;
  readonly #log: Logger;
  /** `Exchange.firstToken`: one function for every request, not a closure each. */
  readonly #firstToken = () => this.checkpoints.firstToken();
  /** `Exchange.finishing`: likewise. */
  readonly #finishing = (turn: Turn) => this.#finishNow(turn);
  /** Turns being measured for settlement (their counts made in the counting worker, so it takes a while). */
  readonly #settling = new Set<Promise<void>>();

  constructor(deps: PipelineDeps) {
    const { config } = deps;
    this.authenticate = deps.authenticate;
    this.#authenticateCached = deps.authenticateCached ?? (() => null);
    this.#entitlements = deps.entitlements;
    this.#settlement = deps.settlement;
    this.#log = deps.log;
    this.admission = new Admission(deps);
    this.checkpoints = new Checkpointer(deps.store, config.gateway.checkpointSeconds * 1000, (turn, metered) => this.#entry(turn, metered), deps.log, deps.credit);
    // The sweeper takes a reservation past its TTL for one a dead instance abandoned, so a live turn must end
    // and settle well before: leave room for the longest silence an upstream may keep (its timeout, checked
    // between chunks) and for settlement itself.
    const ttlMs = this.admission.reservationTtlMs;
    const longestSilenceMs = Math.max(config.gateway.upstreamTimeoutMs, ...Object.values(config.upstreams).map((upstream) => upstream.timeoutMs));
    this.turnLimitMs = ttlMs - Math.min(ttlMs / 2, longestSilenceMs + 60_000);
  }

  /** The 404 for a model the payer's package does not include (or that does not exist), listing valid ids. */
  modelNotFound(principal: Principal, modelId: string): AppError {
    const valid = this.#entitlements.of(principal.payer.package).modelIds;
    const message = bilingual(
      'The model {model} does not exist or is not available on your plan. Valid ids: {valid}.',
      '模型 {model} 不存在，或不在您的套餐内。可用的模型 ID：{valid}。',
      { model: JSON.stringify(modelId), valid: valid.join(', ') },
    );
    return new AppError('model_not_found', message, {
      param: 'model',
      debug: { productModel: modelId },
    });
  }

  /**
   * An HTTP surface: authenticates the request, plans, admits, lets the executor answer, settles.
   * `credential.authorization`: the credential as an `Authorization` value, for a surface that reads it from
   * another header too (the Anthropic API's `x-api-key`); default the request's `Authorization`.
   * `credential.audience`: the surface also takes credentials limited to it (the MCP tool call: MCP OAuth tokens).
   */
  async serve<Call>(
    request: HttpRequest,
    reply: HttpReply,
    plan: (principal: Principal) => TurnPlan<Call, unknown> | Promise<TurnPlan<Call, unknown>>,
    credential: { authorization?: string; audience?: CredentialAudience } = {},
  ): Promise<void> {
    const started = performance.now();
    const authorization = credential.authorization ?? request.headers.authorization;
    const audience = credential.audience;
    const client: BearerClient = audience === undefined ? { ip: request.ip } : { ip: request.ip, audience };
    const principal = this.#authenticateCached(authorization, client) ?? (await this.authenticate(authorization, client));
    const authMs = performance.now() - started;
    // A planner may need to look something up first (the Responses API's stored conversations); chat plans at once.
    const planning = plan(principal);
    const planned = planning instanceof Promise ? await planning : planning;
    const clientId = request.headers['x-svc-request-id'];
    const turn = this.#newTurn(planned, principal, { ip: request.ip, traceId: request.id, clientRequestId: clientId === request.id ? request.id : null }, started);
    turn.authMs = authMs;
    const admitting = this.#admit(turn, planned, request.ip);
    if (admitting) await admitting;
    const abort = new ClientAbort();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    // `on`, not `once` (a wrapper per request): 'close' comes once, and `finally` takes the listener off.
    reply.raw.on('close', onClose);
    // A client that hung up while it was being admitted: 'close' has already fired.
    if (reply.raw.destroyed) abort.abort();
    try {
      await planned.executor.execute(turn, planned.call, { signal: abort, reply, firstToken: this.#firstToken, finishing: this.#finishing });
    } catch (error) {
      if (abort.aborted) {
        // Nobody to answer; the upstream call is already aborted. If nothing was sent upstream yet, nothing
        // was consumed: refund in full.
        turn.status = turn.deployment ? 'client_disconnected' : 'refunded';
        reply.hijack();
        reply.raw.destroy();
        return;
      }
      if (turn.output) {
        request.log.warn({ err: error }, 'reply failed after output');
        reply.raw.destroy();
        return;
      }
      throw await this.#refunded(turn, this.#failure(turn, error));
    } finally {
      reply.raw.off('close', onClose);
      this.#finish(turn, planned);
    }
  }

  /** A turn whose output is returned (MCP tools): admit → execute → settle, for an authenticated principal. */
  async run<Call, Output>(principal: Principal, planned: TurnPlan<Call, Output>, origin: TurnOrigin, signal: ClientSignal = never): Promise<Output> {
    const started = performance.now();
    const turn = this.#newTurn(planned, principal, origin, started);
    const admitting = this.#admit(turn, planned, origin.ip);
    if (admitting) await admitting;
    try {
      return await planned.executor.execute(turn, planned.call, { signal, reply: null, firstToken: this.#firstToken });
    } catch (error) {
      if (signal.aborted) turn.status = turn.deployment ? 'client_disconnected' : 'refunded';
      const failure = this.#failure(turn, error);
      throw signal.aborted ? failure : await this.#refunded(turn, failure);
    } finally {
      this.#finish(turn, planned);
    }
  }

  /**
   * What admitting `planned` would hold, without admitting it (a quote, `modules/quote`): the checks `serve`
   * makes before admission (the payer's entitlement, the key's allow-list) and the turn's reservation.
   */
  reservation(principal: Principal, planned: TurnPlan<unknown, unknown>): Pick<Turn, 'model' | 'worstCase' | 'reservedMicros' | 'stream'> {
    const turn = this.#newTurn(planned, principal, { ip: '', traceId: 'quote', clientRequestId: null }, performance.now());
    return { model: turn.model, worstCase: turn.worstCase, reservedMicros: turn.reservedMicros, stream: turn.stream };
  }

  #newTurn(planned: TurnPlan<unknown, unknown>, principal: Principal, origin: TurnOrigin, started: number): Turn {
    if (!this.#entitlements.allows(principal.payer.package, planned.model.id)) throw this.modelNotFound(principal, planned.model.id);
    const allowed = principal.credential.limits?.allowedModels;
    if (allowed && !allowed.includes(planned.model.id) && !allowed.includes(planned.model.resolvedId)) throw keyModelNotAllowed(planned.model.id, allowed);
    return {
      // The id that keys money is always svc's own; the request id is reused only when svc generated it.
      id: origin.clientRequestId === null ? origin.traceId : newRequestId(),
      traceId: origin.traceId,
      clientRequestId: origin.clientRequestId,
      ip: origin.ip,
      product: planned.product,
      principal,
      model: planned.model,
      stream: planned.stream,
      started,
      authMs: 0,
      admitMs: 0,
      upstreamFrom: started,
      deadline: started + this.turnLimitMs,
      worstCase: planned.worstCase,
      reservedMicros: meteredCost(planned.model.rates, planned.worstCase),
      ref: null,
      paidFromCredit: false,
      rate: null,
      metered: null,
      estimated: false,
      deployment: null,
      upstreamStatus: null,
      output: false,
      status: 'ok',
      failure: null,
      settled: false,
    };
  }

  /** Admits the turn: at once under a lease this instance holds (no promise), else through the store. */
  #admit(turn: Turn, planned: TurnPlan<unknown, unknown>, ip: string): Promise<void> | undefined {
    const admitting = performance.now();
    const pending = this.admission.admit(turn, ip, planned);
    if (!pending) return this.#admitted(turn, planned, admitting);
    return pending.then(() => this.#admitted(turn, planned, admitting));
  }

  #admitted(turn: Turn, planned: TurnPlan<unknown, unknown>, admitting: number): undefined {
    turn.upstreamFrom = performance.now();
    turn.admitMs = turn.upstreamFrom - admitting;
    const { executor, call } = planned;
    if (turn.stream && executor.progress) this.checkpoints.track(turn, () => executor.progress!(turn, call));
    return undefined;
  }

  /** Maps whatever ended execution before any output to the envelope — always with the refund. */
  #failure(turn: Turn, error: unknown): AppError {
    turn.status = turn.status === 'client_disconnected' ? turn.status : 'refunded';
    const failed = error instanceof AppError ? error : this.#upstreamFailure(turn, error);
    turn.failure = { code: failed.code, stage: failed.options.stage ?? errorCodes[failed.code].stage };
    return failed;
  }

  #upstreamFailure(turn: Turn, error: unknown): AppError {
    const failure = classifyUpstreamError(error);
    const { clientMessage, status, headers } = failure.details;
    return new AppError(failure.code, clientMessage, {
      status,
      headers,
      cause: failure.cause ?? error,
      debug: { productModel: turn.model.id, upstreamStatus: failure.upstreamStatus, upstreamHost: turn.deployment, quotaRefunded: true },
    });
  }

  /**
   * A refunded turn's settlement, written before its error is (SECURITY: a refund is committed before the
   * reply says `quotaRefunded: true`): the next request, on any instance, sees the pools without it. When
   * the write failed (it is retried) the reply does not claim the refund.
   */
  async #refunded(turn: Turn, failure: AppError): Promise<AppError> {
    if (turn.status === 'refunded' && !turn.settled && turn.paidFromCredit) {
      this.checkpoints.untrack(turn);
      turn.settled = true;
      const entry = this.#entry(turn, { inputTokens: 0, outputTokens: 0 });
      entry.paidFromCredit = true;
      const refunded = await this.#settlement.commit(entry, null, this.#holdOf(turn));
      const debug = failure.options.debug;
      if (!refunded && debug?.quotaRefunded) debug.quotaRefunded = false;
      return failure;
    }
    if (turn.status !== 'refunded' || turn.settled || turn.ref === null) return failure;
    this.checkpoints.untrack(turn);
    turn.settled = true;
    const committed = await this.#settlement.commit(this.#entry(turn, { inputTokens: 0, outputTokens: 0 }), turn.ref);
    const debug = failure.options.debug;
    if (!committed && debug?.quotaRefunded) debug.quotaRefunded = false;
    return failure;
  }

  /**
   * Settles a turn whose reply is about to end (`Exchange.finishing`), when nothing is left to measure; the
   * reply waits for the promise: its final checkpoint in Redis's socket (settlement.ts). `#finish` then
   * finds it settled.
   */
  #finishNow(turn: Turn): Promise<void> | undefined {
    if (turn.settled || (turn.ref === null && !turn.paidFromCredit)) return undefined;
    const metered = turn.status === 'refunded' ? { inputTokens: 0, outputTokens: 0 } : turn.metered;
    if (metered === null) return undefined;
    this.checkpoints.untrack(turn);
    turn.settled = true;
    return this.#record(turn, this.#entry(turn, metered));
  }

  /** Exactly once per admitted turn, on every exit path. The work happens off the response path. */
  #finish(turn: Turn, planned: TurnPlan<unknown, unknown>): void {
    this.checkpoints.untrack(turn);
    if (turn.settled || (turn.ref === null && !turn.paidFromCredit)) return;
    turn.settled = true;
    const settling: Promise<void> = this.#settle(turn, planned)
      .catch((error: unknown) => this.#log.error({ err: error, requestId: turn.id }, 'settlement failed'))
      .then(() => void this.#settling.delete(settling));
    this.#settling.add(settling);
  }

  /** Resolves once every turn that ended has been handed to settlement (app close waits for it, then closes settlement). */
  async measured(): Promise<void> {
    await Promise.all(this.#settling);
  }

  async #settle(turn: Turn, planned: TurnPlan<unknown, unknown>): Promise<void> {
    let metered: Metered = { inputTokens: 0, outputTokens: 0 };
    if (turn.status !== 'refunded') {
      metered = turn.metered ?? (planned.executor.measure ? await planned.executor.measure(turn, planned.call) : metered);
    }
    this.#record(turn, this.#entry(turn, metered));
  }

  /**
   * Hands the turn's row to settlement (with its final checkpoint: `record`'s promise). A credit-paid turn has no
   * pool to move: its hold is ended, the unused part of its credit given back, once the row is written.
   */
  #record(turn: Turn, entry: LedgerEntry): Promise<void> | undefined {
    if (!turn.paidFromCredit) return this.#settlement.record(entry, turn.ref);
    entry.paidFromCredit = true;
    return this.#settlement.record(entry, null, this.#holdOf(turn));
  }

  #holdOf(turn: Turn): CreditHold {
    return { requestId: turn.id, payerId: turn.principal.payer.id, reservedMicros: turn.reservedMicros };
  }

  /** The ledger row of a turn that consumed `metered`; its cost never exceeds the reservation. */
  #entry(turn: Turn, metered: Metered): LedgerEntry {
    const { principal } = turn;
    return {
      requestId: turn.id,
      clientRequestId: turn.clientRequestId,
      accountId: principal.accountId,
      payerKind: principal.payer.kind,
      payerId: principal.payer.id,
      credentialKind: principal.credential.kind,
      credentialId: principal.credential.id,
      channel: channels[principal.credential.kind] ?? 'api',
      product: turn.product,
      model: turn.model.id,
      routedModel: turn.model.resolvedId,
      deployment: turn.deployment,
      class: turn.model.class,
      stream: turn.stream,
      inputTokens: metered.inputTokens,
      outputTokens: metered.outputTokens,
      unit: metered.unit?.kind ?? null,
      unitQuantity: metered.unit?.quantity ?? null,
      estimated: turn.estimated,
      costMicros: turnCost(turn, metered),
      reservedMicros: turn.reservedMicros,
      status: turn.status,
      upstreamStatus: turn.upstreamStatus,
      latencyMs: performance.now() - turn.started,
      errorCode: turn.failure?.code ?? null,
      errorStage: turn.failure?.stage ?? null,
      // Only an organisation key's address is kept: the organisation sees its connecting servers (DESIGN §8.1).
      clientIp: principal.credential.kind === 'enterprise_key' ? turn.ip : null,
    };
  }
}

/**
 * The composition root: builds every service once per app, in dependency order, and starts and stops
 * them (`start()` after construction, `close()` in reverse order). Every transport (REST, GraphQL, the
 * gateway, the CLI) receives these same objects; nothing else constructs a service.
 *
 * A new metered product adds its executor here and registers it on a surface: e.g.
 * `chatSurface.register('svc-img', (body) => images.planFromChat(body))`.
 */
import type { FastifyBaseLogger } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from './config/config.ts';
import type { Database } from './db/orm.ts';
import { createPubSubFor } from './infra/pubsub.ts';
import type { RedisLayer } from './infra/redis.ts';
import { closeWithin } from './infra/shutdown.ts';
import { MeteringPipeline } from './metering/pipeline.ts';
import { notifyingStore } from './metering/pool.notifying-store.ts';
import { RedisPoolStore } from './metering/pool.redis-store.ts';
import { SqlPoolStore } from './metering/pool.sql-store.ts';
import type { PoolStore } from './metering/pool.store.ts';
import { Settlement } from './metering/settlement.ts';
import { Sweeper } from './metering/sweeper.ts';
import { LeasingPoolStore } from './metering/pool.leasing-store.ts';
import { PoolWindows } from './metering/windows.ts';
import { AccountService } from './modules/account/account.service.ts';
import { Mailer } from './modules/account/mailer.ts';
import { OidcService } from './modules/account/oidc.service.ts';
import { ApiKeyService } from './modules/api-key/api-key.service.ts';
import { DeviceAuthService } from './modules/device-auth/device-auth.service.ts';
import { ChatExecutor } from './modules/gateway/chat.executor.ts';
import { ImageExecutor, imageModelId } from './modules/media/image.executor.ts';
import { MediaService } from './modules/media/media.service.ts';
import { SpeechExecutor } from './modules/media/speech.executor.ts';
import { ChatSurface } from './modules/gateway/chat.surface.ts';
import { CompletionsSurface } from './modules/gateway/completions.surface.ts';
import { ResponseStore } from './modules/gateway/responses.store.ts';
import { ResponsesSurface } from './modules/gateway/responses.surface.ts';
import { IdentityService } from './modules/identity/identity.service.ts';
import { LastUsedRecorder } from './modules/identity/last-used.ts';
import { ModelRegistry } from './modules/model/model.registry.ts';
import { ModelCatalogue } from './modules/model/model.service.ts';
import { EntitlementCatalogue } from './modules/plan/entitlements.ts';
import { PlanService } from './modules/plan/plan.service.ts';
import { RateLimiter } from './modules/rate-limit/rate-limit.service.ts';
import { Throttle } from './modules/rate-limit/throttle.ts';
import { SessionService } from './modules/session/session.service.ts';
import { UsageEvents } from './modules/usage/usage.events.ts';
import { UsageService } from './modules/usage/usage.service.ts';
import { AuditLog } from './modules/audit/audit.service.ts';
import { PlanAssignments } from './modules/plan/plan-assignment.service.ts';
import { StaffService } from './modules/staff/staff.service.ts';
import { StatsService } from './modules/staff/stats.service.ts';
import { McpTools } from './modules/mcp/mcp.tools.ts';
import { SearchExecutor, searchModelId } from './modules/search/search.executor.ts';
import { createSearchService, type SearchService } from './modules/search/search.service.ts';
import { BillingJobs } from './modules/billing/billing.jobs.ts';
import { BillingOrders } from './modules/billing/billing.service.ts';
import { CheckoutService } from './modules/billing/checkout.service.ts';
import { OrderEvents } from './modules/billing/order.events.ts';
import { PaymentProviders } from './modules/billing/providers/registry.ts';
import { SubscriptionService } from './modules/billing/subscription.service.ts';
import { ConnectionRecorder } from './modules/enterprise/connections.ts';
import { EnterpriseEvents } from './modules/enterprise/enterprise.events.ts';
import { EnterpriseService } from './modules/enterprise/enterprise.service.ts';

export interface Services {
  config: Config;
  db: Database;
  redis: RedisLayer;
  models: ModelCatalogue;
  plans: PlanService;
  /** What each plan package allows: pools, models, requests per minute. */
  entitlements: EntitlementCatalogue;
  /** GCRA limiter (Redis, or in process in single-instance mode); see rate-limit.service.ts. */
  rateLimits: RateLimiter;
  /** Usage reports and history per payer, and the live `usageUpdated` events. */
  usage: UsageService;
  /** Bearer and cookie authentication with the credential cache: `identity.authenticateBearer(header)`. */
  identity: IdentityService;
  /** Sign-up, password and email-code sign-in, the admin bootstrap: `accounts.signUp({ email, password })`. */
  accounts: AccountService;
  sessions: SessionService;
  /** Personal keys: `apiKeys.createForAccount(accountId, { name })` returns `{ key, token }`. */
  apiKeys: ApiKeyService;
  deviceAuth: DeviceAuthService;
  oidc: OidcService;
  mailer: Mailer;
  /** Batched `lastUsedAt` writes; flushed on close. */
  lastUsed: LastUsedRecorder;
  /** Pools and reservations (Redis, or SQL in embedded mode). */
  pools: PoolStore;
  windows: PoolWindows;
  /** The ledger writer (batched, durable) and the database health that admission reads. */
  settlement: Settlement;
  /** Reclaims reservations of dead instances (at their last checkpoint) and reconciles pools with the ledger. */
  sweeper: Sweeper;
  /** Product id → deployments, and the upstream connection pools. */
  registry: ModelRegistry;
  /** authenticate → admit → execute → settle, for every metered product. */
  pipeline: MeteringPipeline;
  /** `POST /v1/chat/completions`: validation, then the planner of the requested model. */
  chatSurface: ChatSurface;
  /** Stored images and audio (local directory or S3), their retention job, the embedded speech engine. */
  media: MediaService;
  /** `POST /v1/responses`: the Responses API over the chat executor. */
  responsesSurface: ResponsesSurface;
  /** `POST /v1/completions`: legacy text completions over the chat executor. */
  completionsSurface: CompletionsSurface;
  /** svc-img on the chat surface: image upstream → stored images → Markdown links. */
  images: ImageExecutor;
  /** `POST /v1/audio/speech`: svc-tts (an upstream or the embedded engine) and svc-music (an upstream). */
  speech: SpeechExecutor;
  /** Starts timers and subscriptions (sweeper, settlement health, checkpoints, usage events). */
  start(): void;
  /** Stops everything in reverse dependency order, flushing what is queued; each step has a deadline. */
  close(): Promise<void>;
  /** The append-only audit log: `audit.record(entry, em)` inside the transaction of the change. */
  audit: AuditLog;
  /** Which package an account is on: `planAssignments.assign(actor, …)` (staff), `.assignAsSystem(…)` (payments). */
  planAssignments: PlanAssignments;
  /** Staff lookups and actions on accounts: search, detail, disable/enable, end sessions, set role and package. */
  staff: StaffService;
  /** The staff dashboard's figures from the ledger and orders, and the review queue's length. */
  stats: StatsService;
  /** Hosted search as a library: the configured provider behind the short cache (no billing). */
  search: SearchService;
  /** `web_search` as a metered turn of svc-2.1-search: the MCP tool, the REST tool call and the chat model. */
  searchExecutor: SearchExecutor;
  /** The hosted MCP tools (`web_search`): their list, the discovery document and call planning. */
  mcpTools: McpTools;
  /** The payment providers that are on (config `payments.*`), each failing closed without its keys. */
  paymentProviders: PaymentProviders;
  /** Orders and notifications: create, verify and apply (idempotent), reconcile, refund. */
  billingOrders: BillingOrders;
  /** What a paid order does to the account's term and package; period end; cancel and resume. */
  subscriptions: SubscriptionService;
  /** Members' checkout and orders, the sandbox pay page, staff order lookup, re-query and refund. */
  checkout: CheckoutService;
  /** `orderUpdated`: order changes fanned out to every instance. */
  orderEvents: OrderEvents;
  /** Reconciliation and period-end jobs (every minute on every instance). */
  billingJobs: BillingJobs;
  /** Enterprise applications, organisations, their svc_ent_ keys and connecting IPs (DESIGN §8.1). */
  enterprise: EnterpriseService;
}

export function createServices(config: Config, db: Database, redis: RedisLayer, log: Logger): Services {
  const logger = log as unknown as FastifyBaseLogger;
  const warn = (message: string) => (error: unknown) => log.warn({ err: (error as Error).message }, message);
  const rateLimits = new RateLimiter(redis);
  const throttle = new Throttle(redis, rateLimits);
  const lastUsed = new LastUsedRecorder(db, { onError: warn('could not record credential use') });
  const identity = new IdentityService(config, db, redis, lastUsed);
  const mailer = new Mailer(config, log);
  const accounts = new AccountService(config, db, throttle, mailer, identity);
  const sessions = new SessionService(config, db, identity);
  const entitlements = new EntitlementCatalogue(config);

  const windows = new PoolWindows(config.timezone);
  const events = new UsageEvents(createPubSubFor(redis, warn('usage event fan-out failed')), redis.keyPrefix);
  // Names this process in the pools' heartbeats and reservations, so others can tell when it died.
  const instanceId = randomUUID();
  const redisPools = redis.redis ? new RedisPoolStore(redis.redis, instanceId) : null;
  const leases = config.gateway.admissionLeases;
  const pools = notifyingStore(
    redisPools && leases.enabled && !redis.cluster
      ? new LeasingPoolStore(redisPools, {
          chunkRequests: leases.chunkRequests,
          admitWindowMs: leases.admitWindowSeconds * 1000,
          reservationTtlMs: config.gateway.reservationTtlSeconds * 1000,
          refusedForMs: 1000,
          hotRequests: leases.hotRequests,
          idleMs: leases.idleSeconds * 1000,
          onError: (error, what) => log.warn({ err: error }, what),
        })
      : (redisPools ?? new SqlPoolStore(db, instanceId)),
    events,
  );
  const settlement = new Settlement(config, db, pools, logger);
  const sweeper = new Sweeper(config, db, pools, windows, logger);
  const registry = new ModelRegistry(config, { connectionsPerUpstream: config.gateway.connectionsPerUpstream });
  const pipeline = new MeteringPipeline({
    config,
    authenticate: (authorization, client) => identity.authenticateBearer(authorization, client),
    authenticateCached: (authorization, client) => identity.authenticateCached(authorization, client),
    entitlements,
    store: pools,
    windows,
    settlement,
    log: logger,
  });
  const chat = new ChatExecutor(registry);
  const chatSurface = new ChatSurface(config, registry, pipeline, chat);
  const responsesSurface = new ResponsesSurface(pipeline, chatSurface, chat, new ResponseStore(redis.redis, config.gateway.responsesRetentionSeconds));
  const completionsSurface = new CompletionsSurface(pipeline, chatSurface, chat);
  const media = new MediaService(config, log);
  const images = new ImageExecutor(config, registry, media);
  chatSurface.register(imageModelId, (body) => images.planFromChat(body));
  const speech = new SpeechExecutor(config, registry, media);
  const plans = new PlanService(config, entitlements);
  const usage = new UsageService(config, db, pools, windows, entitlements, events);
  const audit = new AuditLog(db);
  const planAssignments = new PlanAssignments(config, db, { plans, audit, identity, usage: events }, warn('plan package expiry failed'));
  const apiKeys = new ApiKeyService(db, identity, audit);
  const search = createSearchService(config, db, redis, warn('search cache unavailable'));
  const searchExecutor = new SearchExecutor(registry, search);
  chatSurface.register(searchModelId, (body) => searchExecutor.planFromChat(body));
  const mcpTools = new McpTools(config, searchExecutor);
  const paymentProviders = new PaymentProviders(config);
  const orderEvents = new OrderEvents(createPubSubFor(redis, warn('order event fan-out failed')), redis.keyPrefix);
  const subscriptions = new SubscriptionService(config, db, { audit, planAssignments, mailer, log, orderChanged: (order) => orderEvents.changed(order.id) });
  const billingOrders = new BillingOrders(config, db, paymentProviders, subscriptions.hooks);
  const checkout = new CheckoutService(db, { orders: billingOrders, providers: paymentProviders, subscriptions, audit });
  const billingJobs = new BillingJobs({ orders: billingOrders, subscriptions, redis, log, instanceId });
  const enterpriseEvents = new EnterpriseEvents(createPubSubFor(redis, warn('enterprise event fan-out failed')), redis.keyPrefix);
  const connectionRecorder = new ConnectionRecorder(db, redis.redis, enterpriseEvents, warn('could not record connecting IPs'));
  const enterprise = new EnterpriseService(config, db, { identity, audit, mailer, plans, usage, events: enterpriseEvents, connections: connectionRecorder, throttle, warn });
  // The enterprise module's applications give the dashboard its review queue.
  const stats = new StatsService(config, db, windows, { reviewQueue: enterprise });

  return {
    config,
    db,
    redis,
    models: new ModelCatalogue(config),
    plans,
    entitlements,
    rateLimits,
    usage,
    identity,
    accounts,
    sessions,
    apiKeys,
    deviceAuth: new DeviceAuthService(config, db, throttle, sessions, accounts),
    oidc: new OidcService(config, redis),
    mailer,
    lastUsed,
    audit,
    planAssignments,
    staff: new StaffService(db, { audit, identity, planAssignments, usage, apiKeys, sessions }),
    stats,
    search,
    searchExecutor,
    mcpTools,
    paymentProviders,
    billingOrders,
    subscriptions,
    checkout,
    orderEvents,
    billingJobs,
    pools,
    windows,
    settlement,
    sweeper,
    registry,
    pipeline,
    chatSurface,
    media,
    responsesSurface,
    completionsSurface,
    images,
    speech,
    enterprise,
    start() {
      identity.start();
      settlement.start();
      sweeper.start();
      pipeline.checkpoints.start();
      events.start();
      media.start();
      // Time-limited packages return to Free on time (every instance runs it; each expired row is taken once).
      planAssignments.start();
      orderEvents.start();
      // Lost notifications recovered, unpaid orders expired, ended terms moved on (each instance; see billing.jobs.ts).
      billingJobs.start();
      connectionRecorder.start();
    },
    async close() {
      await closeWithin(log, 'payment jobs', () => billingJobs.close());
      await closeWithin(log, 'order events', () => orderEvents.close());
      await closeWithin(log, 'plan package expiry', () => planAssignments.close());
      pipeline.checkpoints.close();
      sweeper.close();
      await closeWithin(log, 'ledger settlement', () => settlement.close());
      if (pools.close) await closeWithin(log, 'admission leases', () => pools.close!());
      await closeWithin(log, 'instance heartbeat', () => sweeper.leave());
      await closeWithin(log, 'upstream pools', () => registry.close());
      await closeWithin(log, 'usage events', () => events.close());
      await closeWithin(log, 'media', () => media.close());
      identity.close();
      await closeWithin(log, 'connecting IPs flush', () => connectionRecorder.close());
      await closeWithin(log, 'last-used flush', () => lastUsed.close());
      await Promise.all([closeWithin(log, 'database', () => db.close()), closeWithin(log, 'redis', () => redis.close())]);
    },
  };
}

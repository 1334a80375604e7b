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
import { embeddingModelIds, type Config } from './config/config.ts';
import type { Database } from './db/orm.ts';
import { createPubSubFor } from './infra/pubsub.ts';
import type { RedisLayer } from './infra/redis.ts';
import { closeWithin } from './infra/shutdown.ts';
import { closeTokenWorker } from './modules/gateway/token-count.ts';
import { MeteringPipeline } from './metering/pipeline.ts';
import { notifyingStore } from './metering/pool.notifying-store.ts';
import { keyCappedCredit } from './metering/admission.ts';
import { RedisPoolStore } from './metering/pool.redis-store.ts';
import { SqlPoolStore } from './metering/pool.sql-store.ts';
import type { PoolStore } from './metering/pool.store.ts';
import { Settlement } from './metering/settlement.ts';
import { Sweeper } from './metering/sweeper.ts';
import { LeasingPoolStore } from './metering/pool.leasing-store.ts';
import { PoolWindows } from './metering/windows.ts';
import { AccountService } from './modules/account/account.service.ts';
import { DevOutbox } from './modules/account/dev-outbox.ts';
import { Mailer } from './modules/account/mailer.ts';
import { OidcService } from './modules/account/oidc.service.ts';
import { ApiKeyService } from './modules/api-key/api-key.service.ts';
import { KeyLimitPolicy } from './modules/api-key/key-limits.ts';
import { DeviceAuthService } from './modules/device-auth/device-auth.service.ts';
import { OAuthClients } from './modules/oauth/oauth-client.ts';
import { OAuthAuthorizations } from './modules/oauth/oauth.service.ts';
import { OAuthTokens } from './modules/oauth/oauth-token.service.ts';
import { ChatExecutor } from './modules/gateway/chat.executor.ts';
import { EmbeddingExecutor } from './modules/embedding/embedding.executor.ts';
import { ImageExecutor, imageModelId } from './modules/media/image.executor.ts';
import { MediaService } from './modules/media/media.service.ts';
import { musicModelId, SpeechExecutor, speechModelId } from './modules/media/speech.executor.ts';
import { ChatSurface } from './modules/gateway/chat.surface.ts';
import { CompletionsSurface } from './modules/gateway/completions.surface.ts';
import { ResponseStore } from './modules/gateway/responses.store.ts';
import { ResponsesSurface } from './modules/gateway/responses.surface.ts';
import { HostedSearch } from './modules/gateway/hosted-search.ts';
import { MessagesSurface } from './modules/gateway/messages.surface.ts';
import { IdentityService } from './modules/identity/identity.service.ts';
import { LastUsedRecorder } from './modules/identity/last-used.ts';
import { EnterpriseKeyResolver } from './modules/identity/resolvers/enterprise-key.resolver.ts';
import { PersonalKeyResolver } from './modules/identity/resolvers/personal-key.resolver.ts';
import { McpTokenResolver } from './modules/identity/resolvers/mcp-token.resolver.ts';
import { SessionResolver } from './modules/identity/resolvers/session.resolver.ts';
import { ModelRegistry } from './modules/model/model.registry.ts';
import { ModelCatalogue } from './modules/model/model.service.ts';
import { UpstreamStatusMonitor } from './modules/model/upstream-status.ts';
import { EntitlementCatalogue } from './modules/plan/entitlements.ts';
import { PlanService } from './modules/plan/plan.service.ts';
import { RateLimiter } from './rate-limit/rate-limit.service.ts';
import { Throttle } from './rate-limit/throttle.ts';
import { SessionService } from './modules/session/session.service.ts';
import { UsageEvents } from './modules/usage/usage.events.ts';
import { CreditEvents } from './modules/credit/credit.events.ts';
import { CreditLedger } from './modules/credit/credit.ledger.ts';
import { CreditService, creditOrderHooks } from './modules/credit/credit.service.ts';
import { Exports } from './modules/export/export.service.ts';
import { UsageService } from './modules/usage/usage.service.ts';
import { QuoteService } from './modules/quote/quote.service.ts';
import { AlertDeliveries } from './modules/alerts/alerts.delivery.ts';
import { AlertEvents } from './modules/alerts/alerts.events.ts';
import { KeyMeters, PoolMeters } from './modules/alerts/alerts.meter.ts';
import { AlertMonitor } from './modules/alerts/alerts.monitor.ts';
import { AlertService } from './modules/alerts/alerts.service.ts';
import { AlertStore } from './modules/alerts/alerts.store.ts';
import { AuditLog } from './modules/audit/audit.service.ts';
import { PlanAssignments } from './modules/plan/plan-assignment.service.ts';
import { StaffService } from './modules/staff/staff.service.ts';
import { StaffSearch } from './modules/staff/staff-search.service.ts';
import { StatsService } from './modules/staff/stats.service.ts';
import { McpTools, mcpPath } from './modules/mcp/mcp.tools.ts';
import { SearchExecutor, searchModelId } from './modules/search/search.executor.ts';
import { createSearchService, type SearchService } from './modules/search/search.service.ts';
import { BillingJobs } from './modules/billing/billing.jobs.ts';
import { BillingOrders } from './modules/billing/billing.service.ts';
import { CheckoutService } from './modules/billing/checkout.service.ts';
import { BillingPayers } from './modules/billing/payer.ts';
import { Statements } from './modules/statement/statement.service.ts';
import { OrderEvents } from './modules/billing/order.events.ts';
import { PaymentProviders } from './modules/billing/providers/registry.ts';
import { SubscriptionService } from './modules/billing/subscription.service.ts';
import { ApplicationReviews } from './modules/enterprise/application-review.service.ts';
import { EnterpriseApplications } from './modules/enterprise/application.service.ts';
import { ApplicationTimeline } from './modules/enterprise/application.timeline.ts';
import { ConnectingIps } from './modules/enterprise/connecting-ip.service.ts';
import { ConnectionRecorder } from './modules/enterprise/connections.ts';
import { EnterpriseEvents } from './modules/enterprise/enterprise.events.ts';
import { EnterpriseMailer } from './modules/enterprise/enterprise.mailer.ts';
import { OrganisationKeys } from './modules/enterprise/organisation-key.service.ts';
import { OrganisationMembers } from './modules/enterprise/organisation-member.service.ts';
import { Organisations } from './modules/enterprise/organisation.service.ts';
import { OrganisationRoles } from './modules/enterprise/organisation-roles.ts';

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
  /** Spend alerts: thresholds, channels, notices, the webhook test and delivery log (alerts.service.ts). */
  alerts: AlertService;
  /** Finds crossed thresholds in this instance's usage rounds and claims each once (alerts.monitor.ts). */
  alertMonitor: AlertMonitor;
  /** Works the alert delivery queue: emails and signed webhooks, retried with backoff (alerts.delivery.ts). */
  alertDeliveries: AlertDeliveries;
  /** Bearer and cookie authentication with the credential cache: `identity.authenticateBearer(header)`. */
  identity: IdentityService;
  /** Sign-up, password and email-code sign-in, the admin bootstrap: `accounts.signUp({ email, password })`. */
  accounts: AccountService;
  sessions: SessionService;
  /** Personal keys: `apiKeys.createForAccount(accountId, { name })` returns `{ key, token }`. */
  apiKeys: ApiKeyService;
  /** What a key may be limited to (spend caps, rpm, models, expiry), shared by personal and organisation keys. */
  keyLimits: KeyLimitPolicy;
  deviceAuth: DeviceAuthService;
  /** OAuth for MCP clients: dynamic registration (RFC 7591) of public clients. */
  oauthClients: OAuthClients;
  /** OAuth for MCP clients: authorization requests, the consent page's decisions, the grants members hold. */
  oauthAuthorizations: OAuthAuthorizations;
  /** OAuth for MCP clients: the token endpoint's code exchange and refresh, and revocation. */
  oauthTokens: OAuthTokens;
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
  /** Staff: whether the model servers are configured and answering (the admin app's banner). */
  upstreamStatus: UpstreamStatusMonitor;
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
  /** `POST /v1/messages`: the Anthropic Messages API (Claude Code) over the chat executor. */
  messagesSurface: MessagesSurface;
  /** svc-img on the chat surface (stored images → Markdown links) and `POST /v1/images/generations`. */
  images: ImageExecutor;
  /** `POST /v1/embeddings`: the models of `kind: embedding`, billed by input tokens. */
  embeddings: EmbeddingExecutor;
  /** `POST /v1/audio/speech`: svc-tts (an upstream or the embedded engine) and svc-music (an upstream). */
  speech: SpeechExecutor;
  /** Starts timers and subscriptions (sweeper, settlement health, checkpoints, usage events). */
  start(): void;
  /** Stops everything in reverse dependency order, flushing what is queued; each step has a deadline. */
  close(): Promise<void>;
  /** The append-only audit log: `audit.record(entry, em)` inside the transaction of the change. */
  audit: AuditLog;
  /**
   * Which package an account is on, and its one writer: `planAssignments.assign(actor, …)` (staff),
   * `.assignWithin(tx, …)` (payments, approvals: inside their transaction), `.assignAsSystem(…)` (jobs, tests).
   */
  planAssignments: PlanAssignments;
  /** Staff lookups and actions on accounts: search, detail, disable/enable, end sessions, set role and package. */
  staff: StaffService;
  /** The admin app's one search box: accounts, organisations, keys, requests and orders by what was typed. */
  staffSearch: StaffSearch;
  /** The staff dashboard's figures from the ledger and orders, and the review queue's length. */
  stats: StatsService;
  /** Hosted search as a library: the configured provider behind the short cache (no billing). */
  search: SearchService;
  /** `web_search` as a metered turn of svc-2.1-search: the MCP tool, the REST tool call and the chat model. */
  searchExecutor: SearchExecutor;
  /** The hosted MCP tools (`web_search`): their list, the discovery document and call planning. */
  mcpTools: McpTools;
  /** What a request body would reserve and cost at most, without sending it (quote.service.ts). */
  quotes: QuoteService;
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
  /** Prepaid credit's ledger: appends (never below zero), a turn paid from credit, the opt-in. */
  creditLedger: CreditLedger;
  /** `creditUpdated`: credit changes fanned out to every instance. */
  creditEvents: CreditEvents;
  /** Members' credit (balance, entries, buy, redeem, opt in) and staff's code batches. */
  credits: CreditService;
  /** Streamed CSV exports of an account's usage, payments and credit entries. */
  exports: Exports;
  /** Enterprise applications, the applicant's side: submit, withdraw, read, the timeline, live changes (DESIGN §8.1). */
  enterpriseApplications: EnterpriseApplications;
  /** Staff's side of enterprise applications: the queue, approve (creating the organisation), reject. */
  applicationReviews: ApplicationReviews;
  /** Organisations (accounts of kind organisation): who may do what to one (`access`), their usage. */
  organisations: Organisations;
  /** Organisations' monthly statements: usage from the rollups, payments, credit (statement.service.ts). */
  statements: Statements;
  /** An organisation's members and invitations. */
  organisationMembers: OrganisationMembers;
  /** An organisation's `svc_ent_` keys: list, mint, revoke. */
  organisationKeys: OrganisationKeys;
  /** The connecting IPs of organisation keys: list, watch, flush. */
  connectingIps: ConnectingIps;
}

// Resolvers are typed against `graphql-core`'s `ResolverServices`, which stands below the modules; this fills it in.
declare module './graphql-core/context.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface ResolverServices extends Services {}
}

export function createServices(config: Config, db: Database, redis: RedisLayer, log: Logger): Services {
  const base: Base = {
    config,
    db,
    redis,
    log,
    logger: log as unknown as FastifyBaseLogger,
    warn: (message) => (error) => log.warn({ err: (error as Error).message }, message),
    // Names this process in the pools' heartbeats and reservations, so others can tell when it died.
    instanceId: randomUUID(),
  };
  // Each step builds one part, from what the steps before it built; what only services share stays out of `Services`.
  const { throttle, enterpriseEvents, connectionRecorder, ...people } = identityServices(base);
  const { events, ...metering } = meteringServices(base, people);
  const products = productServices(base, { ...people, ...metering });
  const { organisationRoles, ...membership } = membershipServices(base, { ...people, ...metering }, events);
  const billing = billingServices(base, { ...people, ...metering, ...membership }, organisationRoles);
  const enterprise = enterpriseServices(base, { ...people, ...metering, ...membership }, { throttle, enterpriseEvents, connectionRecorder });
  const alerts = alertServices(base, { ...people, ...metering, ...membership }, { events, organisationRoles });
  const services = { config, db, redis, models: new ModelCatalogue(config, { [imageModelId]: 'image', [searchModelId]: 'search', [speechModelId]: 'speech', [musicModelId]: 'music' }),
    upstreamStatus: new UpstreamStatusMonitor(config),
    ...people, ...metering, ...products, ...membership, ...billing, ...enterprise, ...alerts };
  return { ...services, ...lifecycle(base, services, { events, connectionRecorder }) };
}

/** What every construction step is given. */
interface Base {
  config: Config;
  db: Database;
  redis: RedisLayer;
  log: Logger;
  logger: FastifyBaseLogger;
  /** A handler for background failures that are logged and survived. */
  warn: (message: string) => (error: unknown) => void;
  instanceId: string;
}

/**
 * Who you are: limits and throttles, every credential's resolver and their cache, accounts, sessions, device
 * login, OAuth for MCP clients, what plans allow. The enterprise key resolver records connecting IPs, so their
 * recorder (and its events) are made here too.
 */
function identityServices({ config, db, redis, log, warn }: Base) {
  const rateLimits = new RateLimiter(redis);
  const throttle = new Throttle(redis, rateLimits);
  const lastUsed = new LastUsedRecorder(db, { onError: warn('could not record credential use') });
  const enterpriseEvents = new EnterpriseEvents(createPubSubFor(redis, warn('enterprise event fan-out failed')), redis.keyPrefix);
  const connectionRecorder = new ConnectionRecorder(db, redis.redis, enterpriseEvents, warn('could not record connecting IPs'));
  // Every credential a request may carry, one resolver per token prefix (the web session cookie is a session).
  const identity = new IdentityService(config, db, redis, lastUsed, [
    new PersonalKeyResolver(db),
    new SessionResolver(config, db),
    new McpTokenResolver(db),
    new EnterpriseKeyResolver(db, connectionRecorder),
  ]);
  const mailer = new Mailer(config, log, new DevOutbox(redis.redis, createPubSubFor(redis, warn('development outbox fan-out failed')), redis.keyPrefix));
  const accounts = new AccountService(config, db, throttle, mailer, identity);
  const oauthClients = new OAuthClients(config, db, throttle);
  // MCP tokens are for svc's MCP server: its endpoint, or the server as a whole (the root resource metadata).
  const oauthResources = [`${config.server.baseUrl}${mcpPath}`, config.server.baseUrl] as const;
  const oauthAuthorizations = new OAuthAuthorizations(config, db, { clients: oauthClients, identity, resources: oauthResources });
  // MCP clients' grants are listed and ended with the member's sessions.
  const sessions = new SessionService(config, db, identity, oauthAuthorizations);
  const entitlements = new EntitlementCatalogue(config);
  const deviceAuth = new DeviceAuthService(config, db, throttle, sessions, accounts);
  const oauthTokens = new OAuthTokens(config, db, { identity, resources: oauthResources });
  const oidc = new OidcService(config, redis);
  return { rateLimits, throttle, lastUsed, enterpriseEvents, connectionRecorder, identity, mailer, accounts, oauthClients, oauthAuthorizations, sessions, entitlements, deviceAuth, oauthTokens, oidc };
}

/** The one metering pipeline and what it stands on: windows, pools, the ledger's settlement, the sweeper, upstreams. */
function meteringServices(base: Base, { identity, entitlements }: Pick<Services, 'identity' | 'entitlements'>) {
  const { config, db, redis, logger, warn } = base;
  const windows = new PoolWindows(config.timezone);
  const events = new UsageEvents(createPubSubFor(redis, warn('usage event fan-out failed')), redis.keyPrefix);
  const pools = notifyingStore(poolStore(base), events);
  // Prepaid credit pays a turn whose pools are exhausted, for payers who opted in: settlement ends such a
  // turn's hold once its row is written, and the sweeper returns the holds of such turns whose instance died,
  // as it does pool reservations.
  const creditEvents = new CreditEvents(createPubSubFor(redis, warn('credit event fan-out failed')), redis.keyPrefix);
  const creditLedger = new CreditLedger(config, db, creditEvents);
  // A capped key's credit-paid turns hold its caps too: settling or sweeping one moves them to its cost.
  const credit = keyCappedCredit(creditLedger, pools);
  const settlement = new Settlement(config, db, pools, logger, credit);
  const registry = new ModelRegistry(config, { connectionsPerUpstream: config.gateway.connectionsPerUpstream });
  const sweeper = new Sweeper(config, db, pools, windows, logger, credit);
  const pipeline = new MeteringPipeline({
    config,
    authenticate: (authorization, client) => identity.authenticateBearer(authorization, client),
    authenticateCached: (authorization, client) => identity.authenticateCached(authorization, client),
    entitlements,
    store: pools,
    windows,
    settlement,
    credit,
    log: logger,
  });
  return { windows, events, pools, settlement, sweeper, registry, pipeline, creditEvents, creditLedger };
}

/** Pools in Redis (with admission leases unless turned off or clustered), or in SQL in embedded mode. */
function poolStore({ config, db, redis, log, instanceId }: Base): PoolStore {
  const redisPools = redis.redis ? new RedisPoolStore(redis.redis, instanceId) : null;
  const leases = config.gateway.admissionLeases;
  if (!redisPools || !leases.enabled || redis.cluster) return redisPools ?? new SqlPoolStore(db, instanceId);
  return new LeasingPoolStore(redisPools, {
    chunkRequests: leases.chunkRequests,
    admitWindowMs: leases.admitWindowSeconds * 1000,
    reservationTtlMs: config.gateway.reservationTtlSeconds * 1000,
    refusedForMs: 1000,
    hotRequests: leases.hotRequests,
    idleMs: leases.idleSeconds * 1000,
    onError: (error, what) => log.warn({ err: error }, what),
  });
}

/** The metered products: chat and its surfaces (Responses, completions, Messages), images, speech, search, the MCP tools. */
function productServices({ config, db, redis, log, logger, warn }: Base, { registry, pipeline, entitlements, pools, windows }: Pick<Services, 'registry' | 'pipeline' | 'entitlements' | 'pools' | 'windows'>) {
  const chat = new ChatExecutor(registry);
  const chatSurface = new ChatSurface(config, registry, pipeline, chat);
  const search = createSearchService(config, db, redis, warn('search cache unavailable'));
  const searchExecutor = new SearchExecutor(registry, search);
  chatSurface.register(searchModelId, (body) => searchExecutor.planFromChat(body));
  // The hosted web_search of the Responses and Messages APIs: searches the model asks for, each a search turn.
  const hostedSearch = new HostedSearch(pipeline, chat, searchExecutor);
  const responsesSurface = new ResponsesSurface(pipeline, chatSurface, chat, new ResponseStore(redis.redis, config.gateway.responsesRetentionSeconds), hostedSearch);
  const completionsSurface = new CompletionsSurface(pipeline, chatSurface, chat);
  const messagesSurface = new MessagesSurface(pipeline, chatSurface, chat, entitlements, hostedSearch);
  const media = new MediaService(config, log);
  const images = new ImageExecutor(config, registry, media);
  chatSurface.register(imageModelId, (body) => images.planFromChat(body), [{ field: 'size', makes: { en: 'images', zh: '图片' } }]);
  const speech = new SpeechExecutor(config, registry, media);
  const embeddings = new EmbeddingExecutor(registry, embeddingModelIds(config));
  const mcpTools = new McpTools(config, searchExecutor);
  // Quotes plan a body as its endpoint would, and price the reservation admission would hold.
  const quotes = new QuoteService({ pipeline, chat: chatSurface, messages: messagesSurface, responses: responsesSurface, store: pools, windows, entitlements, log: logger });
  return { chatSurface, responsesSurface, completionsSurface, messagesSurface, media, images, speech, embeddings, search, searchExecutor, mcpTools, quotes };
}

/** Plans and packages, usage reports, the audit log, organisation roles, personal keys, staff actions on accounts and their search box. */
function membershipServices({ config, db, warn }: Base, { identity, entitlements, sessions, pools, windows }: Pick<Services, 'identity' | 'entitlements' | 'sessions' | 'pools' | 'windows'>, events: UsageEvents) {
  const plans = new PlanService(config, entitlements);
  const usage = new UsageService(config, db, pools, windows, entitlements, events);
  const audit = new AuditLog(db);
  // Who belongs to which organisation: staff changes and organisation checkout ask it.
  const organisationRoles = new OrganisationRoles(db);
  const planAssignments = new PlanAssignments(config, db, { plans, audit, identity, usage: events, organisationRoles }, warn('plan package expiry failed'));
  // A key's own limits (issue 51): validated and shown alike for personal and organisation keys.
  const keyLimits = new KeyLimitPolicy(config, entitlements, windows, db);
  const apiKeys = new ApiKeyService(db, identity, audit, keyLimits);
  const staff = new StaffService(db, { audit, identity, planAssignments, usage, apiKeys, sessions, organisationRoles });
  return { plans, usage, audit, organisationRoles, planAssignments, keyLimits, apiKeys, staff, staffSearch: new StaffSearch(db) };
}

/** Payments: providers, orders and notifications, subscriptions, checkout, and their jobs. */
function billingServices(
  { config, db, redis, log, warn, instanceId }: Base,
  { mailer, audit, planAssignments, rateLimits, creditLedger }: Pick<Services, 'mailer' | 'audit' | 'planAssignments' | 'rateLimits' | 'creditLedger'>,
  organisationRoles: OrganisationRoles,
) {
  const paymentProviders = new PaymentProviders(config);
  const orderEvents = new OrderEvents(createPubSubFor(redis, warn('order event fan-out failed')), redis.keyPrefix);
  // A member pays for themselves, an organisation's owner or admin for it.
  const payers = new BillingPayers(organisationRoles);
  const subscriptions = new SubscriptionService(config, db, { audit, planAssignments, mailer, log, payers, orderChanged: (order) => orderEvents.changed(order.id) });
  // Credit top-up orders go to the credit ledger; every other order buys a package.
  const hooks = creditOrderHooks(subscriptions.hooks, { ledger: creditLedger, audit, orderChanged: (order) => orderEvents.changed(order.id) });
  const billingOrders = new BillingOrders(config, db, paymentProviders, hooks, {
    // Forged notices are stored at a bounded rate per provider across every instance; if Redis cannot say, not at all.
    budget: async (provider) =>
      (await rateLimits.hit([{ key: `billing:unverified:${provider}`, limit: config.payments.unverifiedPerMinute, periodMs: 60_000 }]).catch(() => null))?.allowed ?? false,
  });
  const checkout = new CheckoutService(db, { orders: billingOrders, providers: paymentProviders, subscriptions, audit, payers });
  const billingJobs = new BillingJobs({ orders: billingOrders, subscriptions, redis, log, instanceId });
  const credits = new CreditService(config, db, { ledger: creditLedger, audit, orders: billingOrders, providers: paymentProviders, payers });
  return { paymentProviders, orderEvents, subscriptions, billingOrders, checkout, billingJobs, credits, exports: new Exports(db, config.timezone) };
}

/** Enterprise: applications and their review, organisations, members, keys, connecting IPs; the staff dashboard's figures. */
function enterpriseServices(
  { config, db, warn }: Base,
  { identity, mailer, windows, audit, plans, usage, planAssignments, keyLimits }: Pick<Services, 'identity' | 'mailer' | 'windows' | 'audit' | 'plans' | 'usage' | 'planAssignments' | 'keyLimits'>,
  { throttle, enterpriseEvents, connectionRecorder }: { throttle: Throttle; enterpriseEvents: EnterpriseEvents; connectionRecorder: ConnectionRecorder },
) {
  const enterpriseMail = new EnterpriseMailer(config, db, mailer, warn);
  const organisations = new Organisations(config, db, { planAssignments, usage });
  const organisationMembers = new OrganisationMembers(config, db, { organisations, mail: enterpriseMail, throttle });
  const organisationKeys = new OrganisationKeys(db, { organisations, identity, audit, limits: keyLimits });
  const connectingIps = new ConnectingIps(db, { organisations, recorder: connectionRecorder, events: enterpriseEvents });
  const applicationTimeline = new ApplicationTimeline(db, { events: enterpriseEvents, mail: enterpriseMail });
  const enterpriseApplications = new EnterpriseApplications(config, db, { organisations, throttle, timeline: applicationTimeline });
  const applicationReviews = new ApplicationReviews(config, db, { organisations, planAssignments, plans, audit, timeline: applicationTimeline, warn });
  // The enterprise module's applications give the dashboard its review queue.
  const stats = new StatsService(config, db, windows, { reviewQueue: applicationReviews });
  const statements = new Statements(config, db, { organisations });
  return { organisations, organisationMembers, organisationKeys, connectingIps, enterpriseApplications, applicationReviews, stats, statements };
}

/**
 * Spend alerts: pools and keys' spend caps are meters (`sources`); the monitor hears
 * this instance's usage rounds; the delivery loop sends what the claims queued.
 */
function alertServices(
  { config, db, redis, log, warn }: Base,
  { usage, windows, mailer, rateLimits }: Pick<Services, 'usage' | 'windows' | 'mailer' | 'rateLimits'>,
  { events, organisationRoles }: { events: UsageEvents; organisationRoles: OrganisationRoles },
) {
  const store = new AlertStore(db);
  const alertEvents = new AlertEvents(createPubSubFor(redis, warn('alert notice fan-out failed')), redis.keyPrefix);
  const sources = [new PoolMeters(usage, db, windows), new KeyMeters(db, windows)];
  const alertDeliveries = new AlertDeliveries(config, { store, mailer, log });
  const alertMonitor = new AlertMonitor(config, { store, sources, events: alertEvents, queued: () => alertDeliveries.wake(), log });
  events.onRound((payerIds) => alertMonitor.noteChanged(payerIds));
  const alerts = new AlertService(config, { store, sources, monitor: alertMonitor, deliveries: alertDeliveries, roles: organisationRoles, rateLimits, events: alertEvents });
  return { alerts, alertMonitor, alertDeliveries };
}

/** `start()` after construction; `close()` in reverse dependency order, each step with a deadline. */
function lifecycle({ db, redis, log }: Base, services: Omit<Services, 'start' | 'close'>, { events, connectionRecorder }: { events: UsageEvents; connectionRecorder: ConnectionRecorder }): Pick<Services, 'start' | 'close'> {
  const { identity, lastUsed, settlement, sweeper, pipeline, pools, registry, media, planAssignments, orderEvents, billingJobs, alerts, alertMonitor, alertDeliveries, creditEvents } = services;
  return {
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
      creditEvents.start();
      // Lost notifications recovered, unpaid orders expired, ended terms moved on (each instance; see billing.jobs.ts).
      billingJobs.start();
      connectionRecorder.start();
      // Alert notices fan out across instances; every instance works the delivery queue.
      alerts.events.start();
      alertDeliveries.start();
    },
    async close() {
      await closeWithin(log, 'payment jobs', () => billingJobs.close());
      await closeWithin(log, 'order events', () => orderEvents.close());
      await closeWithin(log, 'credit events', () => creditEvents.close());
      await closeWithin(log, 'plan package expiry', () => planAssignments.close());
      pipeline.checkpoints.close();
      sweeper.close();
      await closeWithin(log, 'turns measured for settlement', () => pipeline.measured());
      await closeWithin(log, 'ledger settlement', () => settlement.close());
      if (pools.close) await closeWithin(log, 'admission leases', () => pools.close!());
      await closeWithin(log, 'instance heartbeat', () => sweeper.leave());
      await closeWithin(log, 'upstream pools', () => registry.close());
      await closeWithin(log, 'usage events', () => events.close());
      // After the last usage round: its alerts are claimed and queued, then the loop finishes what it holds.
      await closeWithin(log, 'spend alert checks', () => alertMonitor.close());
      await closeWithin(log, 'spend alert deliveries', () => alertDeliveries.close());
      await closeWithin(log, 'alert notices', () => alerts.events.close());
      await closeWithin(log, 'media', () => media.close());
      await closeWithin(log, 'token counting worker', () => closeTokenWorker());
      identity.close();
      await closeWithin(log, 'connecting IPs flush', () => connectionRecorder.close());
      await closeWithin(log, 'last-used flush', () => lastUsed.close());
      await Promise.all([closeWithin(log, 'database', () => db.close()), closeWithin(log, 'redis', () => redis.close())]);
    },
  };
}

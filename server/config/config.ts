/**
 * The one place that reads the environment and the YAML config (DESIGN §6). Parsed once with zod;
 * anything invalid fails with a message naming the key. Everything else receives the typed `Config`.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { defaultModelAliases, defaultModels, defaultPlans } from './catalogue.ts';
import { ConfigError } from './config-error.ts';
import { mergeDeep } from './merge.ts';
import { isCurrencyCode, minorToMicros, parseMinor, parseMicros, type Micros } from './money.ts';
import { MetricsModel, resolveMetrics, type MetricsSettings } from './metrics.ts';
import { resolvePayments, PaymentsModel, type Payments } from './payments.ts';

export { ConfigError };

const MicrosModel = z
  .union([z.number(), z.string()])
  .transform((value, ctx): Micros => {
    const micros = parseMicros(value);
    if (micros === null) {
      ctx.addIssue({ code: 'custom', message: `expected a non-negative amount with at most 6 decimals, got ${JSON.stringify(value)}` });
      return z.NEVER;
    }
    return micros;
  });

/** A discount as a fraction (0.70 = 70 %), kept as integer basis points. */
const DiscountModel = z
  .number()
  .min(0)
  .max(1)
  .transform((fraction) => Math.round(fraction * 10_000));

export const ModelClassModel = z.enum(['fast', 'premium']);
export type ModelClass = z.infer<typeof ModelClassModel>;
export const modelClasses = ModelClassModel.options;

export const PoolWindowModel = z.enum(['day', 'week', 'month']);
export type PoolWindow = z.infer<typeof PoolWindowModel>;
export const poolWindows = PoolWindowModel.options;

const DeploymentModel = z.strictObject({
  upstream: z.string().min(1),
  model: z.string().min(1),
});

const ProductModelModel = z
  .strictObject({
    /** What people read (`svc models`, the pricing page); unset = the id. */
    name: z.string().min(1).optional(),
    /**
     * `embedding`: the model makes embeddings and answers `POST /v1/embeddings` only (its upstream's
     * `/embeddings`). Unset: a chat model — or the product its executor makes (svc-img, svc-tts, …).
     */
    kind: z.enum(['chat', 'embedding']).optional(),
    tier: ModelClassModel,
    inputPrice: MicrosModel,
    /** Required, except for an embedding model (which produces no tokens: 0). */
    outputPrice: MicrosModel.optional(),
    intendedUse: z.string().default(''),
    maxOutputTokens: z.number().int().positive().default(8192),
    /** The context window the model's upstream serves, in tokens (prompt + output): `context_length` in /v1/models. */
    contextLength: z.number().int().positive().default(131_072),
    routesTo: z.string().optional(),
    deployments: z.array(DeploymentModel).default([]),
  })
  .superRefine((model, ctx) => {
    if (model.outputPrice === undefined && model.kind !== 'embedding') ctx.addIssue({ code: 'custom', path: ['outputPrice'], message: 'required (only an embedding model may leave it out)' });
  })
  .transform((model) => ({ ...model, outputPrice: model.outputPrice ?? 0 }));

/**
 * Which request fields svc does not validate itself (`top_k`, `store`, `metadata`, …) reach an upstream:
 * those `allow` names (`*` = all) minus those `deny` names; the rest are dropped from what it receives.
 */
const ForwardFieldsModel = z.strictObject({
  allow: z.array(z.string().min(1)).default(['*']),
  deny: z.array(z.string().min(1)).default([]),
});
export type ForwardFields = z.infer<typeof ForwardFieldsModel>;

const UpstreamModel = z.strictObject({
  baseUrl: z.url(),
  apiKeyEnv: z.string().optional(),
  label: z.string().min(1),
  timeoutMs: z.number().int().positive().default(60_000),
  /** Unset: `gateway.forwardFields`. */
  forwardFields: ForwardFieldsModel.optional(),
});

/**
 * What a package costs per month in each currency it can be bought in, as integer minor units
 * (`{USD: 9, CNY: 65}` → `{USD: 900, CNY: 6500}`). Set per currency: there is no runtime FX.
 */
const PricesModel = z
  .record(z.string(), z.union([z.number(), z.string()]))
  .transform((prices, ctx): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [currency, value] of Object.entries(prices)) {
      if (!isCurrencyCode(currency)) {
        ctx.addIssue({ code: 'custom', path: [currency], message: `expected an ISO 4217 currency code such as USD or CNY, got ${currency}` });
        continue;
      }
      const minor = parseMinor(value, currency);
      if (minor === null || minor === 0) {
        ctx.addIssue({ code: 'custom', path: [currency], message: `expected a positive amount of ${currency}, got ${JSON.stringify(value)}` });
        continue;
      }
      out[currency] = minor;
    }
    return out;
  });

/** `*`, or an origin exactly as a browser sends it: `https://app.example.com` (scheme, host, port; no path). */
const CorsOriginModel = z.string().refine((value) => {
  if (value === '*') return true;
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}, 'expected "*" or an origin such as https://app.example.com (no path, no trailing slash)');

/** An origin exactly as a browser sends it, never `*`: it is trusted with the member's cookie. */
const WebOriginModel = z.string().refine((value) => {
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}, 'expected an origin such as https://app.example.com (no path, no trailing slash, no "*")');

const WindowPoolsModel = z.strictObject({ day: MicrosModel, week: MicrosModel, month: MicrosModel });

const PlanModel = z.strictObject({
  name: z.string().min(1),
  description: z.string().default(''),
  requestsPerMinute: z.number().int().positive(),
  /** Product ids this plan may use; unset = every model. */
  models: z.array(z.string()).min(1).optional(),
  pools: z.strictObject({ fast: WindowPoolsModel, premium: WindowPoolsModel }),
  packages: z
    .array(
      z.strictObject({
        id: z.string().regex(/^[a-z0-9_]+$/),
        name: z.string().min(1),
        price: MicrosModel,
        /** Checkout prices per currency (minor units); a package without prices cannot be bought. */
        prices: PricesModel.default({}),
        multiplier: z.number().int().positive(),
      }),
    )
    .min(1),
});

const AuthModel = z.strictObject({
  /** Web sessions end after this long without use. */
  sessionIdleDays: z.number().positive().default(7),
  /** Web sessions end this long after sign-in, used or not. */
  sessionAbsoluteDays: z.number().positive().default(30),
  /** Lifetime of bearer session tokens from device login. */
  deviceSessionDays: z.number().positive().default(30),
  deviceCodeTtlSeconds: z.number().int().min(60).max(3600).default(600),
  devicePollIntervalSeconds: z.number().int().min(1).max(60).default(5),
  /** Wrong user codes an account (an IP: four times as many) may enter before code entry locks for the code lifetime. */
  deviceWrongCodeLimit: z.number().int().positive().default(5),
  emailCodeTtlSeconds: z.number().int().min(60).max(3600).default(600),
  emailCodeMaxAttempts: z.number().int().positive().default(5),
  /** How long a resolved credential stays cached; revocations invalidate at once through pub/sub. */
  credentialCacheSeconds: z.number().int().min(0).max(3600).default(60),
  throttle: z
    .strictObject({
      signInPerMinutePerIp: z.number().int().positive().default(20),
      signInPerHourPerAccount: z.number().int().positive().default(30),
      signUpPerHourPerIp: z.number().int().positive().default(20),
      /** Sign-ups per email domain (example.com) per hour, from any address: against scripted sign-ups spread over many IPs. */
      signUpPerHourPerDomain: z.number().int().positive().default(50),
      emailCodePerHourPerEmail: z.number().int().positive().default(5),
      emailCodePerHourPerIp: z.number().int().positive().default(30),
      devicePollPerMinutePerIp: z.number().int().positive().default(120),
    })
    .prefault({}),
  /** OAuth for MCP clients (authorization code + PKCE, dynamic registration): tokens that work only on /v1/mcp. */
  oauth: z
    .strictObject({
      /** Lifetime of an MCP access token; clients refresh it with their refresh token. */
      accessTokenSeconds: z.number().int().min(60).max(86_400).default(3600),
      /** Lifetime of a refresh token; each refresh rotates it (a new one, valid this long again). */
      refreshTokenDays: z.number().positive().max(365).default(30),
      /** Dynamic client registrations (POST /oauth/register) per IP per hour. */
      registrationsPerHourPerIp: z.number().int().positive().default(20),
    })
    .prefault({}),
});

const MailModel = z.strictObject({
  from: z.string().min(3).default('svc <no-reply@localhost>'),
  /** Without SMTP, print each message (sign-in codes included) to the log: for development only. */
  logOutbox: z.boolean().default(false),
  /** Unset: mail is kept in an in-memory development outbox (printed only with `logOutbox`). */
  smtp: z
    .strictObject({
      host: z.string().min(1),
      port: z.number().int().min(1).max(65_535).default(587),
      /** true = TLS from the first byte (port 465); false = STARTTLS when offered. */
      secure: z.boolean().default(false),
      user: z.string().optional(),
      passwordEnv: z.string().optional(),
    })
    .optional(),
});

const OidcModel = z.strictObject({
  issuer: z.url(),
  clientId: z.string().min(1),
  clientSecretEnv: z.string().optional(),
  scopes: z.string().default('openid email profile'),
  /** What the sign-in button says. */
  label: z.string().min(1).default('Single sign-on'),
});

const HttpUrlModel = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' });

/** A host name or IP literal: `docs.example.com`, `10.0.0.5`, `fd00::5` or `[fd00::5]` (no scheme, port or path). */
const HostModel = z
  .string()
  .refine(
    (value) => isIP(value.replace(/^\[(.*)\]$/, '$1')) !== 0 || /^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.?)+$/.test(value),
    'expected a host name or IP literal such as docs.example.com or 10.0.0.5 (no scheme, port or path)',
  );

/** Hosted search (DESIGN §8.3): which provider answers `web_search`, and how. */
export const SearchProviderNameModel = z.enum(['embedded', 'searxng', 'brave', 'tavily']);
export type SearchProviderName = z.infer<typeof SearchProviderNameModel>;

const SearchModel = z
  .strictObject({
    provider: SearchProviderNameModel.default('embedded'),
    /** Results when the caller asks for no number, and the most it may ask for. */
    maxResults: z.number().int().min(1).max(50).default(10),
    /** Identical queries within this many seconds are answered from the cache (Redis when configured); 0 = off. */
    cacheSeconds: z.number().int().min(0).max(86_400).default(60),
    searxng: z
      .strictObject({
        /** Base URL of a SearXNG instance with `json` in `search.formats`; `SVC_SEARCH_URL` sets it. */
        url: HttpUrlModel.optional(),
        timeoutMs: z.number().int().positive().default(5000),
      })
      .prefault({}),
    brave: z
      .strictObject({
        apiKeyEnv: z.string().min(1).default('BRAVE_API_KEY'),
        baseUrl: HttpUrlModel.default('https://api.search.brave.com/res/v1'),
        timeoutMs: z.number().int().positive().default(5000),
      })
      .prefault({}),
    tavily: z
      .strictObject({
        apiKeyEnv: z.string().min(1).default('TAVILY_API_KEY'),
        baseUrl: HttpUrlModel.default('https://api.tavily.com'),
        timeoutMs: z.number().int().positive().default(10_000),
        searchDepth: z.enum(['basic', 'advanced']).default('basic'),
        /** Ask Tavily for its generated short answer (the `answer` field of svc.search.v1). */
        includeAnswer: z.boolean().default(false),
      })
      .prefault({}),
    /** `svc search ingest` fetching URLs: https only, and never this machine's or its network's addresses. */
    ingest: z
      .strictObject({
        /** Hosts fetched over plain http (exact names or IP literals); every other URL must be https. */
        allowHttpHosts: z.array(HostModel).default([]),
        /**
         * Hosts that may resolve to loopback, private, link-local or CGNAT addresses: an intranet wiki, a test
         * server. Cloud metadata, multicast and reserved addresses are refused whatever this says.
         */
        allowPrivateHosts: z.array(HostModel).default([]),
      })
      .prefault({}),
  })
  .superRefine((search, ctx) => {
    if (search.provider === 'searxng' && !search.searxng.url) {
      ctx.addIssue({ code: 'custom', path: ['searxng', 'url'], message: 'required when search.provider is searxng (or set SVC_SEARCH_URL)' });
    }
  });
/** Where generated images and audio are kept (DESIGN §8.5); served at `/v1/media/<id>.<ext>`. */
const MediaStorageModel = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('local'),
    /** Unset = `<database.dataDir>/media`. Several instances need a shared directory. */
    dir: z.string().min(1).optional(),
  }),
  z.strictObject({
    kind: z.literal('s3'),
    /** Unset = AWS S3 itself; any S3-compatible server (MinIO, R2, Ceph, …) by URL. */
    endpoint: z.url().optional(),
    region: z.string().min(1).default('us-east-1'),
    bucket: z.string().min(1),
    /** Prepended to every object key, so the bucket can hold other things. */
    prefix: z.string().regex(/^([A-Za-z0-9._-]+\/)*$/, 'expected folder names ending in "/", or empty').default(''),
    /** Names of the environment variables holding the credentials; unset = the AWS SDK's default chain. */
    accessKeyIdEnv: z.string().min(1).optional(),
    secretAccessKeyEnv: z.string().min(1).optional(),
    /** true for most self-hosted servers (`endpoint/bucket/key` instead of `bucket.endpoint/key`). */
    forcePathStyle: z.boolean().default(false),
  }),
]);

const MediaModel = z.strictObject({
  storage: MediaStorageModel.prefault({ kind: 'local' }),
  /** Stored media older than this is deleted by the retention job. */
  retentionDays: z.number().positive().default(30),
  /** How often each instance looks for expired media. */
  retentionSweepMinutes: z.number().positive().default(60),
  /** Output tokens billed per generated 1024×1024 image (scaled by area). */
  imageOutputTokens: z.number().int().positive().default(1000),
  /** Output tokens billed per second of generated audio. */
  audioTokensPerSecond: z.number().int().positive().default(25),
  /** Longest song `svc-music` may be asked for (`duration`). */
  maxMusicSeconds: z.number().int().positive().default(240),
  tts: z
    .strictObject({
      /** What speaks for `svc-tts` when it has no upstream: the embedded espeak-ng (WebAssembly), or nothing. */
      engine: z.enum(['embedded', 'none']).default('embedded'),
    })
    .prefault({}),
});

/**
 * With no upstream configured at all and outside production, svc looks for a model server on this machine
 * at start (Ollama, LM Studio, vLLM, llama.cpp on their usual ports) and uses the first that answers.
 */
const UpstreamDiscoveryModel = z.strictObject({
  /** Unset: on outside production, off in production. */
  enabled: z.boolean().optional(),
  /** Tried on 127.0.0.1 in this order (GET /v1/models); svc's own port is skipped. */
  ports: z.array(z.number().int().min(1).max(65_535)).default([11434, 1234, 8000, 8080]),
  /** How long each port may take to answer. */
  timeoutMs: z.number().int().positive().max(10_000).default(500),
});

const FileConfigModel = z.strictObject({
  server: z
    .strictObject({
      port: z.number().int().min(0).max(65_535).default(8080),
      host: z.string().default('0.0.0.0'),
      baseUrl: z.url().optional(),
      webUrl: z.url().optional(),
      bodyLimitBytes: z.number().int().positive().default(1024 * 1024),
      trustedProxies: z.array(z.string()).default([]),
      /**
       * Other origins of this service's own web app (besides baseUrl and webUrl) that may call /graphql with
       * the member's cookie: credentialed CORS and the cookie Origin check accept exactly these.
       */
      corsOrigins: z.array(WebOriginModel).default([]),
      /** Open connections in total and per client address (trusted proxies exempt); more get a 503 at once. */
      maxConnections: z.number().int().positive().default(10_000),
      maxConnectionsPerIp: z.number().int().positive().default(256),
      /** WebSockets (GraphQL subscriptions) per client address, and subscriptions per account. */
      maxWebSocketsPerIp: z.number().int().positive().default(32),
      maxSubscriptionsPerAccount: z.number().int().positive().default(64),
      /** How long a client may take to send its request headers. */
      headersTimeoutMs: z.number().int().positive().default(10_000),
      logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      /** Production mode (also set by NODE_ENV=production): the payment sandbox can never be on. */
      production: z.boolean().default(false),
    })
    .prefault({}),
  database: z
    .strictObject({
      url: z.string().optional(),
      dataDir: z.string().default('./data'),
    })
    .prefault({}),
  redis: z
    .strictObject({
      url: z.string().optional(),
      /** Prefix for every key and channel, so several deployments (or test runs) can share one Redis. */
      keyPrefix: z.string().default('svc:'),
    })
    .prefault({}),
  web: z.strictObject({ distDir: z.string().default('./dist/web') }).prefault({}),
  currency: z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 code such as USD').default('USD'),
  timezone: z.string().default('UTC'),
  promotion: z.strictObject({ fast: DiscountModel, premium: DiscountModel }).prefault({ fast: 0.7, premium: 0.75 }),
  models: z.record(z.string().regex(/^[a-z0-9][a-z0-9.-]*$/), ProductModelModel).prefault(defaultModels),
  upstreams: z.record(z.string(), UpstreamModel).default({}),
  upstreamDiscovery: UpstreamDiscoveryModel.prefault({}),
  plans: z.strictObject({ free: PlanModel, pro: PlanModel, max: PlanModel, enterprise: PlanModel.prefault(defaultPlans.enterprise) }).prefault(defaultPlans),
  /**
   * Enterprise organisations (DESIGN §8.1). `defaultPackage`: what staff approve an enterprise application
   * onto when they name no package (a commercial organisation always starts on Free).
   * `maxOwnedOrganisations`: how many organisations one account may own.
   */
  enterprise: z
    .strictObject({
      defaultPackage: z.string().regex(/^[a-z0-9_]+$/).default('enterprise'),
      maxOwnedOrganisations: z.number().int().min(1).max(1000).default(3),
    })
    .prefault({}),
  auth: AuthModel.prefault({}),
  mail: MailModel.prefault({}),
  /** Generic OpenID Connect sign-in (authorization code + PKCE); unset = off. */
  oidc: OidcModel.optional(),
  gateway: z
    .strictObject({
      /** Timeout of the quick-start upstream (SVC_UPSTREAM_URL): connect, first byte and gap between chunks. */
      upstreamTimeoutMs: z.number().int().positive().default(60_000),
      /** While staff watch the admin app, each upstream is asked (GET …/models) this often whether it answers. */
      upstreamCheckSeconds: z.number().positive().max(3600).default(30),
      /** Most sockets per upstream origin; 0 = no cap (each open stream holds one socket). */
      connectionsPerUpstream: z.number().int().min(0).default(0),
      /**
       * Advanced, for measuring svc's own HTTP code against the libraries it replaces (test/bench, issue 47):
       * `lane` serves plain chat and Messages requests ahead of Fastify (http/chat-lane.ts), `fastify` leaves
       * them to Fastify's routes. `pool` sends chat calls through svc's own HTTP/1.1 client
       * (model/http1-pool.ts), `undici` through undici's Pool for the origin, as media calls go.
       */
      httpLayer: z.enum(['lane', 'fastify']).default('lane'),
      upstreamClient: z.enum(['pool', 'undici']).default('pool'),
      /** A reservation older than this is settled or released by the sweeper (crash recovery). */
      reservationTtlSeconds: z.number().int().positive().max(86_400).default(1800),
      /**
       * How often a running stream records what it has delivered (it also does at its first token), so a
       * crash bills that less at most one interval. At most a second (SECURITY "Quota and ledger").
       */
      checkpointSeconds: z.number().positive().max(1, 'a stream must checkpoint at least every second').default(1),
      /** How often each instance sweeps expired reservations. */
      sweepIntervalSeconds: z.number().positive().default(15),
      /**
       * Admission leases (single Redis only; on by default): each instance leases a busy payer's pool budget
       * and rate-limit requests in chunks and admits non-streaming requests locally while a lease covers
       * them (pool.leasing-store.ts). `enabled: false` admits every request by the exact Redis script.
       */
      admissionLeases: z
        .strictObject({
          enabled: z.boolean().default(true),
          /** Worst cases (of the request that takes it) and requests of a payer's first lease; the next grow with demand (up to 32×), fewer as a pool fills. */
          chunkRequests: z.number().int().min(2).max(1000).default(32),
          admitWindowSeconds: z.number().positive().max(300).default(5),
          /** A payer is leased once it sends this many requests within a second (1 = from the first). */
          hotRequests: z.number().int().min(1).max(1000).default(8),
          /** A lease that has admitted nothing for this long gives its unused budget back. */
          idleSeconds: z.number().positive().max(300).default(0.2),
        })
        .prefault({}),
      maxMessages: z.number().int().positive().default(256),
      /**
       * Tools with `stream: true`: `emulate` (a non-streaming upstream call, as the spec wants tools, replayed
       * as SSE: the agents and SDKs that stream every turn work) or `reject` (400 tools_require_non_streaming).
       */
      toolsWithStream: z.enum(['reject', 'emulate']).default('emulate'),
      /**
       * An output cap (`max_tokens`, `max_output_tokens`) above the model's `maxOutputTokens`, on every text API:
       * `clamp` lowers it to the model's cap (and `x-svc-max-tokens` says so), `reject` answers 400.
       */
      maxTokens: z.enum(['clamp', 'reject']).default('clamp'),
      /** Request fields svc does not own, for every upstream without its own `forwardFields`. */
      forwardFields: ForwardFieldsModel.prefault({}),
      /** Browsers on these origins may call /v1 with a bearer key (never cookies); [] = no CORS. */
      cors: z
        .strictObject({
          origins: z.array(CorsOriginModel).default(['*']),
          maxAgeSeconds: z.number().int().min(0).max(86_400).default(7200),
        })
        .prefault({}),
      /** How long /v1/responses keeps a response for `previous_response_id` and `item_reference`; 0 = never. */
      responsesRetentionSeconds: z.number().int().min(0).max(30 * 86_400).default(3600),
    })
    .prefault({}),
  media: MediaModel.prefault({}),
  /** What other APIs' clients need to work unchanged (`/v1/messages` for Claude Code). */
  compat: z
    .strictObject({
      /**
       * Model names (or `*` patterns) that stand for an svc model, on every model-taking endpoint: e.g. the
       * `claude-*` ids Claude Code sends. An exact name wins over patterns, a longer pattern over a shorter.
       * Unset: `defaultModelAliases`, less those whose model is not configured.
       */
      modelAliases: z.record(z.string().regex(/^[A-Za-z0-9*][A-Za-z0-9.:_@/*-]*$/, 'expected a model name or a pattern with *'), z.string().min(1)).optional(),
    })
    .prefault({}),
  rateLimits: z
    .strictObject({
      ipPerMinute: z.number().int().positive().default(600),
      deviceStartPerMinute: z.number().int().positive().default(10),
      concurrentStreamsPerAccount: z.number().int().positive().default(8),
      /** Per API key or session token; unset = the account's plan limit. */
      credentialPerMinute: z.number().int().positive().optional(),
    })
    .prefault({}),
  search: SearchModel.prefault({}),
  payments: PaymentsModel.prefault({}),
  /**
   * Prepaid credit (issue 51): what the Credits page offers to buy, in whole units of `currency`, and the
   * bounds of a custom amount.
   */
  credits: z
    .strictObject({
      topUpAmounts: z.array(z.number().int().positive()).default([5, 10, 20, 50]),
      minTopUp: z.number().int().positive().default(1),
      maxTopUp: z.number().int().positive().default(1000),
    })
    .prefault({}),
  graphql: z
    .strictObject({
      /** "Did you mean …?" in GraphQL errors: off, since they spell out the schema to anyone guessing. */
      suggestions: z.boolean().default(false),
    })
    .prefault({}),
  metrics: MetricsModel.prefault({}),
  /**
   * Spend alerts (thresholds on pools, email, in-app notices, signed webhooks). `defaultThresholds`: the
   * percentages every meter alerts at until its account chooses others. Webhooks: each delivery waits
   * `timeoutSeconds` for an answer; a failed one is retried after `backoffSeconds` × 2^(attempt − 1), for up
   * to `retryHours`; each instance looks for due deliveries every `pollSeconds` (and at once after it queued one).
   */
  alerts: z
    .strictObject({
      defaultThresholds: z.array(z.number().int().min(1).max(100)).max(5).default([80, 100]),
      pollSeconds: z.number().positive().max(300).default(5),
      webhook: z
        .strictObject({
          timeoutSeconds: z.number().positive().max(60).default(10),
          backoffSeconds: z.number().positive().max(3600).default(30),
          retryHours: z.number().positive().max(168).default(24),
        })
        .prefault({}),
    })
    .prefault({}),
});

export type FileConfig = z.infer<typeof FileConfigModel>;
export type ProductModelConfig = z.infer<typeof ProductModelModel>;
export type PlanId = keyof FileConfig['plans'];
export type SearchConfig = FileConfig['search'];

export type MediaStorageConfig =
  | (Extract<z.infer<typeof MediaStorageModel>, { kind: 'local' }> & { dir: string })
  | Extract<z.infer<typeof MediaStorageModel>, { kind: 's3' }>;

export type Config = Omit<FileConfig, 'payments' | 'metrics' | 'compat' | 'upstreamDiscovery'> & {
  compat: { modelAliases: Record<string, string> };
  upstreamDiscovery: FileConfig['upstreamDiscovery'] & { enabled: boolean };
  /** Payment providers with their secrets resolved; a provider missing a key is off, with the reason. */
  payments: Payments;
  /** Who may read /metrics, the token resolved. */
  metrics: MetricsSettings;
  server: FileConfig['server'] & { baseUrl: string; webUrl: string };
  media: FileConfig['media'] & { storage: MediaStorageConfig };
  /** Quick-start route for every model without its own deployment (`SVC_UPSTREAM_URL`, or found at start). */
  defaultUpstream: DefaultUpstream | null;
  /** Secrets referenced from the YAML by environment variable name, resolved once here. */
  secrets: Record<string, string | undefined>;
};

/** The quick-start upstream: every product model without deployments of its own goes there. */
export interface DefaultUpstream {
  baseUrl: string;
  apiKey: string | undefined;
  /** Upstream model names that differ from the product id, by product id (`SVC_UPSTREAM_MODEL`, or what discovery chose). */
  modelNames: Record<string, string>;
  /** `env`: SVC_UPSTREAM_URL; `discovered`: a local model server found at start (upstream-discovery.ts). */
  source: 'env' | 'discovered';
}

export type Env = Record<string, string | undefined>;

/** Reads `SVC_CONFIG` (if set) and the environment. Throws `ConfigError` naming the first bad key. */
export function loadConfig(env: Env = process.env, overrides: unknown = undefined): Config {
  const file = env.SVC_CONFIG ? readYaml(env.SVC_CONFIG) : {};
  return parseConfig(mergeDeep(file, overrides ?? {}), env);
}

function readYaml(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (error) {
    throw new ConfigError(`SVC_CONFIG: cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return parseYaml(text) ?? {};
  } catch (error) {
    throw new ConfigError(`SVC_CONFIG: ${path} is not valid YAML: ${(error as Error).message}`);
  }
}

/** Validates a config object (as read from YAML) and applies the environment on top. */
export function parseConfig(input: unknown, env: Env = {}): Config {
  const withEnv = mergeDeep(input, envOverrides(env));
  const result = FileConfigModel.safeParse(withEnv);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const key = issue.path.map(String).join('.') || '(root)';
    const unknown = issue.code === 'unrecognized_keys' ? `${key === '(root)' ? '' : `${key}.`}${issue.keys.join(', ')}` : null;
    throw new ConfigError(unknown ? `invalid config: unknown key ${unknown}` : `invalid config at ${key}: ${issue.message}`);
  }
  const config = result.data;
  checkReferences(config);
  const payments = resolvePayments(config.payments, env, config.server.production);
  const port = config.server.port;
  const metrics = resolveMetrics(config.metrics, env, port);
  const baseUrl = stripSlash(config.server.baseUrl ?? `http://localhost:${port}`);
  const upstreamUrl = env.SVC_UPSTREAM_URL;
  if (upstreamUrl !== undefined && !z.url().safeParse(upstreamUrl).success) {
    throw new ConfigError(`invalid config at SVC_UPSTREAM_URL: expected a URL, got ${JSON.stringify(upstreamUrl)}`);
  }
  const upstreamModel = env.SVC_UPSTREAM_MODEL?.trim() || undefined;
  if (upstreamModel !== undefined && !upstreamUrl) throw new ConfigError('invalid config at SVC_UPSTREAM_MODEL: set SVC_UPSTREAM_URL too (the server that serves this model)');
  const secrets: Record<string, string | undefined> = {};
  for (const upstream of Object.values(config.upstreams)) {
    if (upstream.apiKeyEnv) secrets[upstream.apiKeyEnv] = env[upstream.apiKeyEnv];
  }
  const storage = config.media.storage;
  const mediaSecrets = storage.kind === 's3' ? [storage.accessKeyIdEnv, storage.secretAccessKeyEnv] : [];
  for (const name of [config.mail.smtp?.passwordEnv, config.oidc?.clientSecretEnv, ...mediaSecrets]) {
    if (name) secrets[name] = env[name];
  }
  // An API search provider without its key would fail every search: refuse to start instead.
  const searchProvider = config.search.provider;
  if (searchProvider === 'brave' || searchProvider === 'tavily') {
    const keyEnv = config.search[searchProvider].apiKeyEnv;
    secrets[keyEnv] = env[keyEnv];
    if (!secrets[keyEnv]) throw new ConfigError(`invalid config at search.${searchProvider}.apiKeyEnv: the environment variable ${keyEnv} is not set`);
  }
  if (storage.kind === 's3') {
    for (const key of ['accessKeyIdEnv', 'secretAccessKeyEnv'] as const) {
      const name = storage[key];
      if (name && !env[name]) throw new ConfigError(`invalid config at media.storage.${key}: environment variable ${name} is not set`);
    }
  }
  return {
    ...config,
    payments,
    metrics,
    server: { ...config.server, baseUrl, webUrl: stripSlash(config.server.webUrl ?? baseUrl) },
    media: {
      ...config.media,
      storage: storage.kind === 'local' ? { ...storage, dir: storage.dir ?? join(config.database.dataDir, 'media') } : storage,
    },
    compat: { modelAliases: config.compat.modelAliases ?? Object.fromEntries(Object.entries(defaultModelAliases).filter(([, model]) => config.models[model])) },
    upstreamDiscovery: { ...config.upstreamDiscovery, enabled: config.upstreamDiscovery.enabled ?? !config.server.production },
    defaultUpstream: upstreamUrl
      ? {
          baseUrl: stripSlash(upstreamUrl),
          apiKey: env.SVC_UPSTREAM_API_KEY,
          // One chat model's name: an embedding model keeps its own id (a chat model cannot make embeddings).
          modelNames: upstreamModel ? Object.fromEntries(chatModelIds(config).map((id) => [id, upstreamModel])) : {},
          source: 'env',
        }
      : null,
    secrets,
  };
}

function envOverrides(env: Env): Record<string, unknown> {
  const server: Record<string, unknown> = {};
  if (env.PORT !== undefined) server.port = toInt(env.PORT, 'PORT');
  if (env.SVC_BASE_URL) server.baseUrl = env.SVC_BASE_URL;
  if (env.SVC_WEB_URL) server.webUrl = env.SVC_WEB_URL;
  if (env.LOG_LEVEL) server.logLevel = env.LOG_LEVEL;
  const searchUrl = env.SVC_SEARCH_URL;
  if (searchUrl !== undefined && !HttpUrlModel.safeParse(searchUrl).success) {
    throw new ConfigError(`invalid config at SVC_SEARCH_URL: expected an http(s) URL of a SearXNG instance, got ${JSON.stringify(searchUrl)}`);
  }
  if (env.NODE_ENV === 'production') server.production = true;
  // Development without a mail server: print sign-up and sign-in mails (codes included) in the log.
  const mail = env.SVC_MAIL_LOG_OUTBOX === '1' ? { logOutbox: true } : {};
  return {
    server,
    mail,
    database: env.DATABASE_URL ? { url: env.DATABASE_URL } : {},
    redis: env.REDIS_URL ? { url: env.REDIS_URL } : {},
    // Quick start like SVC_UPSTREAM_URL: one SearXNG instance answers every search.
    search: searchUrl ? { provider: 'searxng', searxng: { url: stripSlash(searchUrl) } } : {},
  };
}

function checkReferences(config: FileConfig): void {
  const storage = config.media.storage;
  if (storage.kind === 's3' && (storage.accessKeyIdEnv === undefined) !== (storage.secretAccessKeyEnv === undefined)) {
    const missing = storage.accessKeyIdEnv === undefined ? 'accessKeyIdEnv' : 'secretAccessKeyEnv';
    throw new ConfigError(`invalid config at media.storage.${missing}: set both accessKeyIdEnv and secretAccessKeyEnv, or neither`);
  }
  for (const [planId, plan] of Object.entries(config.plans)) {
    plan.packages.forEach((pkg, index) => {
      const same = pkg.prices[config.currency];
      // The catalogue shows `price`; a checkout price in the same currency must not say something else.
      if (same !== undefined && minorToMicros(same, config.currency) !== pkg.price) {
        throw new ConfigError(`invalid config at plans.${planId}.packages.${index}.prices.${config.currency}: differs from price`);
      }
    });
    plan.models?.forEach((id, index) => {
      if (!config.models[id]) throw new ConfigError(`invalid config at plans.${planId}.models.${index}: unknown model ${id}`);
    });
  }
  if (!Object.values(config.plans).some((plan) => plan.packages.some((pkg) => pkg.id === config.enterprise.defaultPackage))) {
    throw new ConfigError(`invalid config at enterprise.defaultPackage: unknown package ${config.enterprise.defaultPackage}`);
  }
  for (const [alias, target] of Object.entries(config.compat.modelAliases ?? {})) {
    if (!config.models[target]) throw new ConfigError(`invalid config at compat.modelAliases.${alias}: unknown model ${target}`);
    if (config.models[alias]) throw new ConfigError(`invalid config at compat.modelAliases.${alias}: ${alias} is an svc model already`);
  }
  for (const [id, model] of Object.entries(config.models)) {
    if (model.routesTo !== undefined && !config.models[model.routesTo]) {
      throw new ConfigError(`invalid config at models.${id}.routesTo: unknown model ${model.routesTo}`);
    }
    if (model.routesTo !== undefined && (model.kind === 'embedding') !== (config.models[model.routesTo]!.kind === 'embedding')) {
      throw new ConfigError(`invalid config at models.${id}.routesTo: ${model.routesTo} makes ${model.kind === 'embedding' ? 'text, not embeddings' : 'embeddings, not text'}`);
    }
    model.deployments.forEach((deployment, index) => {
      if (!config.upstreams[deployment.upstream]) {
        throw new ConfigError(`invalid config at models.${id}.deployments.${index}.upstream: unknown upstream ${deployment.upstream}`);
      }
    });
  }
}

/** The ids of the models that are not embedding models (`kind: embedding`). */
export function chatModelIds(config: Pick<FileConfig, 'models'>): string[] {
  return Object.keys(config.models).filter((id) => config.models[id]!.kind !== 'embedding');
}

/** The ids of the embedding models (`kind: embedding`): none unless the operator configures one. */
export function embeddingModelIds(config: Pick<FileConfig, 'models'>): string[] {
  return Object.keys(config.models).filter((id) => config.models[id]!.kind === 'embedding');
}

function toInt(value: string, key: string): number {
  if (!/^\d+$/.test(value)) throw new ConfigError(`invalid config at ${key}: expected an integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Routing table of the gateway: product id → class, effective token rates, output cap and the ordered
 * deployments (upstream + upstream model name) to try. Models without deployments go to the quick-start
 * upstream (`SVC_UPSTREAM_URL`, or a local model server found at start) under their product id, unless it
 * names them otherwise (`SVC_UPSTREAM_MODEL`, `DefaultUpstream.modelNames`). `auto` (and any `routesTo`) takes the deployments
 * of the model it routes to. Chat calls go through svc's own HTTP/1.1 client per origin (`http1-pool.ts`),
 * the media executors' calls through one undici Pool per origin (keep-alive, timeouts); with
 * `gateway.upstreamClient: undici`, chat calls take that Pool too (`undici-client.ts`).
 */
import { Pool } from 'undici';
import type { Config, ForwardFields } from '../../config/config.ts';
import { modelRates } from '../../metering/pricing.ts';
import type { MeteredModel } from '../../metering/turn.ts';
import { Http1Pool } from './http1-pool.ts';
import { UndiciChatClient, type ChatClient } from './undici-client.ts';

export interface Deployment {
  /** The configured label; what error bodies show as `debug.upstreamHost` (never the URL). */
  label: string;
  /** undici's pool for the origin: what the media executors call through. */
  pool: Pool;
  /** What chat calls to the origin take: svc's own HTTP/1.1 client (`http1-pool.ts`), or undici's pool above. */
  chat: ChatClient;
  /** Path of the OpenAI-compatible API on that origin, e.g. `/v1` (endpoints append `/chat/completions`, …). */
  basePath: string;
  /** Model name sent upstream. */
  model: string;
  /** `authorization` header value, if the upstream needs a key. */
  authorization: string | undefined;
  timeoutMs: number;
  /** Which request fields svc does not own may reach this upstream; null = all of them (the default). */
  forward: FieldFilter | null;
}

/** An upstream's `forwardFields` policy, compiled once. */
export interface FieldFilter {
  allowAll: boolean;
  allow: ReadonlySet<string>;
  deny: ReadonlySet<string>;
}

export function compileForwardFields(policy: ForwardFields): FieldFilter | null {
  const allowAll = policy.allow.includes('*');
  if (allowAll && policy.deny.length === 0) return null;
  return { allowAll, allow: new Set(policy.allow), deny: new Set(policy.deny) };
}

/** Whether `field` (one svc does not own) may be sent through `filter`. */
export function forwards(filter: FieldFilter, field: string): boolean {
  return !filter.deny.has(field) && (filter.allowAll || filter.allow.has(field));
}

/** A product model as the gateway routes it: how it is billed, its output cap and where it runs. */
export interface RoutedModel extends MeteredModel {
  maxOutputTokens: number;
  /** An embedding model (config `kind: embedding`): only `/v1/embeddings` serves it. */
  embedding: boolean;
  deployments: readonly Deployment[];
  /** The deployments are the quick-start upstream (`SVC_UPSTREAM_URL`), not ones configured for this model. */
  quickStart: boolean;
  /** Pre-serialized `"model":"<resolvedId>"` fragment for the stream rewriter. */
  modelJson: string;
}

export interface RegistryOptions {
  /** Most sockets per upstream origin; 0 or absent = no cap. */
  connectionsPerUpstream?: number;
}

export class ModelRegistry {
  readonly #models = new Map<string, RoutedModel>();
  /** Per origin: undici's pool and the chat client. */
  readonly #pools = new Map<string, Pick<Deployment, 'pool' | 'chat'>>();

  constructor(config: Config, options: RegistryOptions = {}) {
    const connections = options.connectionsPerUpstream ? options.connectionsPerUpstream : null;
    const poolsFor = (origin: string, timeoutMs: number): Pick<Deployment, 'pool' | 'chat'> => {
      let pools = this.#pools.get(origin);
      if (!pools) {
        const connectTimeoutMs = Math.min(10_000, timeoutMs);
        const pool = new Pool(origin, {
            connections,
            pipelining: 1,
            keepAliveTimeout: 30_000,
            keepAliveMaxTimeout: 300_000,
            connect: { timeout: connectTimeoutMs },
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          });
        const chat =
          config.gateway.upstreamClient === 'undici'
            ? new UndiciChatClient(pool)
            : new Http1Pool(origin, { connections, keepAliveTimeoutMs: 30_000, keepAliveMaxTimeoutMs: 300_000, connectTimeoutMs, headersTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs });
        pools = { pool, chat };
        this.#pools.set(origin, pools);
      }
      return pools;
    };
    const defaultForward = compileForwardFields(config.gateway.forwardFields);
    const deploymentsOf = (id: string): Deployment[] => {
      const model = config.models[id]!;
      if (model.deployments.length > 0) {
        return model.deployments.map((deployment) => {
          const upstream = config.upstreams[deployment.upstream]!;
          const url = new URL(upstream.baseUrl);
          const key = upstream.apiKeyEnv ? config.secrets[upstream.apiKeyEnv] : undefined;
          return {
            label: upstream.label,
            ...poolsFor(url.origin, upstream.timeoutMs),
            basePath: url.pathname.replace(/\/+$/, ''),
            model: deployment.model,
            authorization: key ? `Bearer ${key}` : undefined,
            timeoutMs: upstream.timeoutMs,
            forward: upstream.forwardFields ? compileForwardFields(upstream.forwardFields) : defaultForward,
          };
        });
      }
      const fallback = config.defaultUpstream;
      if (!fallback) return [];
      const url = new URL(fallback.baseUrl);
      const timeoutMs = config.gateway.upstreamTimeoutMs;
      return [
        {
          label: 'default',
          ...poolsFor(url.origin, timeoutMs),
          basePath: url.pathname.replace(/\/+$/, ''),
          model: fallback.modelNames[id] ?? id,
          authorization: fallback.apiKey ? `Bearer ${fallback.apiKey}` : undefined,
          timeoutMs,
          forward: defaultForward,
        },
      ];
    };
    for (const [id, model] of Object.entries(config.models)) {
      let resolvedId = id;
      const seen = new Set([id]);
      while (config.models[resolvedId]!.routesTo !== undefined) {
        resolvedId = config.models[resolvedId]!.routesTo!;
        if (seen.has(resolvedId)) throw new Error(`models.${id}.routesTo forms a cycle`);
        seen.add(resolvedId);
      }
      this.#models.set(id, {
        id,
        resolvedId,
        class: model.tier,
        rates: modelRates(config, id)!,
        maxOutputTokens: model.maxOutputTokens,
        embedding: config.models[resolvedId]!.kind === 'embedding',
        deployments: deploymentsOf(resolvedId),
        quickStart: config.models[resolvedId]!.deployments.length === 0 && config.defaultUpstream !== null,
        modelJson: `"model":${JSON.stringify(resolvedId)}`,
      });
    }
  }

  get(id: string): RoutedModel | undefined {
    return this.#models.get(id);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#pools.values()].flatMap(({ pool, chat }) => [pool.close(), chat.close()]));
  }
}

/**
 * Whether chat can be answered at all: is a model server configured (`SVC_UPSTREAM_URL`, one found at
 * start, or `upstreams` used by deployments), and does each one answer `GET …/models`? Staff see it as a
 * banner in the admin app. Checks cost an HTTP call per upstream, so they run only while someone looks: a
 * read older than `gateway.upstreamCheckSeconds` checks again, and each open `upstreamStatusChanged`
 * subscription re-reads at that interval, pushing when something changed. Concurrent reads share a check.
 */
import { Repeater } from 'graphql-yoga';
import { assert, type Actor } from '../../authz/authz.ts';
import type { Config } from '../../config/config.ts';

export type UpstreamSource = 'none' | 'env' | 'discovered' | 'config';
export type UpstreamProblem = 'refused' | 'timeout' | 'http_status' | 'unreachable';

export interface UpstreamCheck {
  /** `default` for the quick-start upstream, else the upstream's configured `label`. */
  label: string;
  baseUrl: string;
  answering: boolean;
  /** Why not: no connection, no answer in time, or a 5xx, 401 or 403 (`httpStatus`). */
  problem: UpstreamProblem | null;
  httpStatus: number | null;
}

export interface UpstreamStatus {
  configured: boolean;
  /** Where the upstreams came from: the environment, discovery at start, or the config file's deployments. */
  source: UpstreamSource;
  /** Every configured upstream answers (false when none is configured). */
  answering: boolean;
  checkedAt: Date | null;
  upstreams: UpstreamCheck[];
  /** Ports discovery tried on 127.0.0.1 when nothing was configured (empty when it did not run). */
  discoveryPorts: number[];
}

interface Target {
  label: string;
  /** Origin and path only, as the gateway's client uses it (and as staff are shown it). */
  baseUrl: string;
  authorization: string | undefined;
}

const checkTimeoutMs = 5000;

export class UpstreamStatusMonitor {
  readonly #config: Config;
  readonly #targets: Target[];
  readonly #everyMs: number;
  #last: UpstreamStatus | null = null;
  #checking: Promise<UpstreamStatus> | null = null;

  constructor(config: Config) {
    this.#config = config;
    this.#targets = targetsOf(config);
    this.#everyMs = config.gateway.upstreamCheckSeconds * 1000;
  }

  /** Staff: the status, checked again when the last check is older than the interval. */
  async status(actor: Actor): Promise<UpstreamStatus> {
    assert(actor, 'upstream:status');
    return this.#fresh();
  }

  /** Staff: the status at once, then whenever it changes (checked every interval while subscribed). */
  watch(actor: Actor): AsyncIterableIterator<UpstreamStatus> {
    assert(actor, 'upstream:status');
    return new Repeater<UpstreamStatus>(async (push, stop) => {
      let shown = '';
      const tick = async () => {
        const status = await this.#fresh();
        const key = JSON.stringify({ ...status, checkedAt: null });
        if (key !== shown) {
          shown = key;
          await push(status);
        }
      };
      await tick();
      const timer = setInterval(() => void tick().catch(() => undefined), this.#everyMs);
      await stop;
      clearInterval(timer);
    });
  }

  #fresh(): Promise<UpstreamStatus> {
    const last = this.#last;
    if (last && last.checkedAt && Date.now() - last.checkedAt.getTime() < this.#everyMs) return Promise.resolve(last);
    this.#checking ??= this.#check().finally(() => (this.#checking = null));
    return this.#checking;
  }

  async #check(): Promise<UpstreamStatus> {
    const upstreams = await Promise.all(this.#targets.map(check));
    const configured = upstreams.length > 0;
    const source: UpstreamSource = this.#config.defaultUpstream?.source ?? (configured ? 'config' : 'none');
    const discovery = this.#config.upstreamDiscovery;
    const status: UpstreamStatus = {
      configured,
      source,
      answering: configured && upstreams.every((upstream) => upstream.answering),
      checkedAt: new Date(),
      upstreams,
      discoveryPorts: !configured && discovery.enabled ? discovery.ports.filter((port) => port !== this.#config.server.port) : [],
    };
    this.#last = status;
    return status;
  }
}

/** The quick-start upstream and every named upstream a deployment uses, once each. */
function targetsOf(config: Config): Target[] {
  const targets: Target[] = [];
  const fallback = config.defaultUpstream;
  if (fallback) targets.push({ label: 'default', baseUrl: originAndPath(fallback.baseUrl), authorization: fallback.apiKey ? `Bearer ${fallback.apiKey}` : undefined });
  const used = new Set(Object.values(config.models).flatMap((model) => model.deployments.map((deployment) => deployment.upstream)));
  for (const name of used) {
    const upstream = config.upstreams[name]!;
    const key = upstream.apiKeyEnv ? config.secrets[upstream.apiKeyEnv] : undefined;
    targets.push({ label: upstream.label, baseUrl: originAndPath(upstream.baseUrl), authorization: key ? `Bearer ${key}` : undefined });
  }
  return targets;
}

/**
 * What the gateway's client takes of a base URL (model.registry.ts): its origin and path. Whatever else it
 * carries — a password (`https://user:secret@host/v1`), a query — is neither used nor shown.
 */
function originAndPath(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

async function check(target: Target): Promise<UpstreamCheck> {
  const base = { label: target.label, baseUrl: target.baseUrl };
  try {
    const response = await fetch(`${target.baseUrl}/models`, {
      signal: AbortSignal.timeout(checkTimeoutMs),
      redirect: 'manual',
      headers: { accept: 'application/json', ...(target.authorization ? { authorization: target.authorization } : {}) },
    });
    await response.body?.cancel();
    // Up is what matters: a server without a model list (404) or busy (429) answers; one refusing svc's key
    // (401, 403) or failing (5xx) does not serve chat either.
    const answering = response.status < 500 && response.status !== 401 && response.status !== 403;
    return { ...base, answering, problem: answering ? null : 'http_status', httpStatus: response.status };
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    const problem: UpstreamProblem = (error as Error).name === 'TimeoutError' ? 'timeout' : code === 'ECONNREFUSED' ? 'refused' : 'unreachable';
    return { ...base, answering: false, problem, httpStatus: null };
  }
}

/**
 * A newcomer's first start: no `SVC_UPSTREAM_URL`, no deployment in the config, and often a model server
 * already running on this machine — Ollama on 11434, LM Studio on 1234, vLLM or llama.cpp on 8000/8080.
 * Before the gateway is built, svc asks each of `upstreamDiscovery.ports` on 127.0.0.1 for `GET /v1/models`
 * (an OpenAI model list, within `timeoutMs`; svc's own port is skipped) and takes the first that answers,
 * in the listed order, as the quick-start upstream — and says so in the log. Off in production and when
 * anything is configured.
 *
 * Product ids stay the upstream model names, as with `SVC_UPSTREAM_URL` — unless the server lists models
 * and a product id is not among them: then that product model is sent as the server's first listed model
 * (what someone with one model pulled into Ollama expects to be answered by), and the log says so.
 */
import type { Logger } from 'pino';
import { chatModelIds, type Config, type DefaultUpstream } from '../../config/config.ts';

/** A local server that answered: its base URL (…/v1) and the model ids it lists. */
interface Found {
  baseUrl: string;
  models: string[];
}

/** Bodies larger than this are not a model list worth reading. */
const maxListBytes = 1 << 20;

export async function discoverUpstream(config: Config, log: Logger): Promise<Config> {
  const configured = config.defaultUpstream !== null || Object.values(config.models).some((model) => model.deployments.length > 0);
  if (configured) return config;
  const { enabled, ports, timeoutMs } = config.upstreamDiscovery;
  const candidates = ports.filter((port) => port !== config.server.port);
  if (!enabled || candidates.length === 0) {
    log.warn(`No model server is configured: chat answers 503 upstream_not_configured. ${howToConfigure}`);
    return config;
  }
  const answers = await Promise.all(candidates.map((port) => probe(port, timeoutMs)));
  const found = answers.find((answer) => answer !== null);
  if (!found) {
    log.warn(`No model server is configured, and none answered GET /v1/models on 127.0.0.1 port ${candidates.join(', ')}: chat answers 503 upstream_not_configured. ${howToConfigure}`);
    return config;
  }
  // Embedding models keep their ids: the server's first model is a chat model, which makes no embeddings.
  const defaultUpstream = upstreamFor(found, chatModelIds(config));
  log.info({ upstream: found.baseUrl, models: found.models.slice(0, 20) }, describe(found, defaultUpstream));
  return { ...config, defaultUpstream };
}

const howToConfigure =
  'Start one (Ollama, LM Studio, vLLM, llama.cpp) and restart svc, or set SVC_UPSTREAM_URL=http://<host>:<port>/v1 (with SVC_UPSTREAM_API_KEY and SVC_UPSTREAM_MODEL as needed), or upstreams and models.<id>.deployments in the config file (SVC_CONFIG).';

/** The quick-start upstream for a found server: product ids it does not list go as its first listed model. */
export function upstreamFor(found: Found, productIds: readonly string[]): DefaultUpstream {
  const first = found.models[0];
  const served = new Set(found.models);
  const modelNames = first === undefined ? {} : Object.fromEntries(productIds.filter((id) => !served.has(id)).map((id) => [id, first]));
  return { baseUrl: found.baseUrl, apiKey: undefined, modelNames, source: 'discovered' };
}

function describe(found: Found, upstream: DefaultUpstream): string {
  const intro = `No model server was configured: using the one that answered at ${found.baseUrl}`;
  const outro = 'To choose yourself, set SVC_UPSTREAM_URL (and SVC_UPSTREAM_MODEL), or upstreams and models.<id>.deployments in the config file; upstreamDiscovery.enabled: false turns this search off.';
  const first = found.models[0];
  if (first === undefined) {
    return `${intro}. It lists no models yet (Ollama: ollama pull <model>), so each product model is sent under its own id (svc-2.1-fast, …). ${outro}`;
  }
  const mapped = Object.keys(upstream.modelNames);
  const listed = `${found.models.slice(0, 5).join(', ')}${found.models.length > 5 ? ', …' : ''}`;
  if (mapped.length === 0) return `${intro} (it serves ${listed}); each product model is sent under its own id. ${outro}`;
  return `${intro} (it serves ${listed}). Product models it does not serve by name (${mapped.slice(0, 4).join(', ')}${mapped.length > 4 ? ', …' : ''}) are sent to it as ${first}. ${outro}`;
}

/** `GET http://127.0.0.1:<port>/v1/models`: the ids listed, or null when nothing (or not an OpenAI model list) answered. */
async function probe(port: number, timeoutMs: number): Promise<Found | null> {
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  try {
    const response = await fetch(`${baseUrl}/models`, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual', headers: { accept: 'application/json' } });
    if (response.status !== 200 || Number(response.headers.get('content-length') ?? 0) > maxListBytes) {
      await response.body?.cancel();
      return null;
    }
    const text = await response.text();
    if (text.length > maxListBytes) return null;
    const list = JSON.parse(text) as { data?: unknown };
    if (!Array.isArray(list.data)) return null;
    const models = list.data.map((entry: unknown) => (entry as { id?: unknown })?.id).filter((id): id is string => typeof id === 'string' && id.length > 0);
    return { baseUrl, models };
  } catch {
    return null;
  }
}

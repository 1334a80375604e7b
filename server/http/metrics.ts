import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus request count and latency by route and status. One registry per app. */
export interface HttpMetrics {
  registry: Registry;
  /** Counts one answered request (`route` is its pattern, never the raw URL, so labels stay bounded). */
  observe(method: string, route: string, status: number, seconds: number): void;
}

export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  type Label = (typeof labelNames)[number];
  const requests = new Counter({ name: 'svc_http_requests_total', help: 'HTTP requests by route and status.', labelNames, registers: [registry] });
  const latency = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by route and status.',
    labelNames,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // One pair of label children per method, route pattern and status, looked up by a string key: prom-client
  // hashing a label object on every observation cost more than the observation.
  const children = new Map<string, { count: Counter.Internal; time: Histogram.Internal<Label> }>();
  return {
    registry,
    observe(method, route, status, seconds) {
      const key = `${method} ${route} ${status}`;
      let child = children.get(key);
      if (!child) {
        const labels = { method, route, status: String(status) };
        child = { count: requests.labels(labels), time: latency.labels(labels) };
        children.set(key, child);
      }
      child.count.inc();
      child.time.observe(seconds);
    },
  };
}

/** Counts every request Fastify answers, and serves `/metrics`. */
export function installMetrics(app: FastifyInstance, metrics: HttpMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

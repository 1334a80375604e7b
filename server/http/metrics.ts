import type { FastifyInstance } from 'fastify';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { serveMetrics, type MetricsAccess } from './metrics-access.ts';

/** Prometheus request count and latency by route and status. One registry per app. */
export interface HttpMetrics {
  registry: Registry;
  /** Counts one answered request (`route` is its pattern, never the raw URL, so labels stay bounded). */
  observe(method: string, route: string, status: number, seconds: number): void;
}

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** One method, route and status: its request count, latency sum and latency histogram (not cumulative). */
interface Series {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  buckets: Float64Array;
}

/**
 * The HTTP series are counted here and handed to prom-client only when `/metrics` is read (as custom
 * metrics of the registry): prom-client's own observe validates and hashes the labels on every call, even
 * through a label child, which was ~2 % of svc's CPU per chat request.
 */
export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const series = new Map<string, Series>();
  registry.registerMetric({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by route and status.',
    type: 'counter',
    aggregator: 'sum',
    get: async () => ({
      name: 'svc_http_requests_total',
      help: 'HTTP requests by route and status.',
      type: 'counter',
      aggregator: 'sum',
      values: [...series.values()].map(({ labels, count }) => ({ labels, value: count })),
    }),
    reset: () => series.clear(),
  } as never);
  registry.registerMetric({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by route and status.',
    type: 'histogram',
    aggregator: 'sum',
    get: async () => ({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP request latency by route and status.',
      type: 'histogram',
      aggregator: 'sum',
      values: [...series.values()].flatMap(({ labels, count, sum, buckets }) => {
        let below = 0;
        const lines = BUCKETS.map((le, i) => ({ metricName: 'svc_http_request_duration_seconds_bucket', labels: { le, ...labels }, value: (below += buckets[i]!) }));
        lines.push({ metricName: 'svc_http_request_duration_seconds_bucket', labels: { le: '+Inf' as unknown as number, ...labels }, value: count });
        return [...lines, { metricName: 'svc_http_request_duration_seconds_sum', labels, value: sum }, { metricName: 'svc_http_request_duration_seconds_count', labels, value: count }];
      }),
    }),
    reset: () => series.clear(),
  } as never);
  return {
    registry,
    observe(method, route, status, seconds) {
      const key = `${method} ${route} ${status}`;
      let one = series.get(key);
      if (!one) {
        one = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(BUCKETS.length) };
        series.set(key, one);
      }
      one.count += 1;
      one.sum += seconds;
      for (let i = 0; i < BUCKETS.length; i++) {
        if (seconds <= BUCKETS[i]!) {
          one.buckets[i] = one.buckets[i]! + 1;
          break;
        }
      }
    },
  };
}

/** Counts every request Fastify answers, and serves `/metrics` to whom `metrics.*` allows (metrics-access.ts). */
export function installMetrics(app: FastifyInstance, metrics: HttpMetrics, access: MetricsAccess): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  serveMetrics(app, metrics, access);
}

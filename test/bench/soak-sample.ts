/**
 * Preloaded into the svc process of the soak benchmark (`node --import …/soak-sample.ts server/main.ts`, see
 * soak.ts): the process writes one JSON line to stderr every `SVC_SOAK_SAMPLE_MS` (default 10 s) — RSS, V8
 * heap, event-loop lag and open handles — so the runner can tell a flat process from one that leaks. The
 * server itself knows nothing of it: no route, no port, no code in server/.
 *
 *   {"svcSoakSample":1,"t":1732320000000,"rssMb":88.1,"heapUsedMb":31.2,"heapTotalMb":40.5,"externalMb":3.1,
 *    "lagP50Ms":0.9,"lagP99Ms":3.2,"lagMaxMs":7.4,"handles":42,"resources":{"TCPSocketWrap":30,…}}
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

function startSoakSampler(env: NodeJS.ProcessEnv): void {
  const everyMs = Math.max(100, Number(env.SVC_SOAK_SAMPLE_MS ?? 10_000) || 10_000);
  const resolutionMs = 10;
  const lag = monitorEventLoopDelay({ resolution: resolutionMs });
  lag.enable();
  const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  // The histogram holds the time between its timer's ticks: the lag is what exceeds the tick.
  const ms = (ns: number) => Math.max(0, Math.round(ns / 1e4) / 100 - resolutionMs);
  const timer = setInterval(() => {
    const memory = process.memoryUsage();
    const active = process.getActiveResourcesInfo();
    const resources: Record<string, number> = {};
    for (const kind of active) resources[kind] = (resources[kind] ?? 0) + 1;
    const line = {
      svcSoakSample: 1,
      t: Date.now(),
      rssMb: mb(memory.rss),
      heapUsedMb: mb(memory.heapUsed),
      heapTotalMb: mb(memory.heapTotal),
      externalMb: mb(memory.external),
      lagP50Ms: ms(lag.percentile(50)),
      lagP99Ms: ms(lag.percentile(99)),
      lagMaxMs: ms(lag.max),
      handles: active.length,
      resources,
    };
    lag.reset();
    process.stderr.write(`${JSON.stringify(line)}\n`);
  }, everyMs);
  // Never what keeps the process alive: svc exits on SIGTERM as it would without the sampler.
  timer.unref();
}

startSoakSampler(process.env);

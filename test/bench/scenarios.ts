/**
 * The scenarios of issue 5. Each run of a scenario against one system yields flat metrics
 * (`s1.p50Us`, `s2.1000.p99Us`, …); the runner collects one value per round and reports the median.
 */
import type { Script } from '../fixtures/scripted-upstream.ts';
import { closedLoop, closedLoopAutocannon, fixedRate, sequential, streams, type StreamResult } from './load.ts';
import { rssByMapping, sampleProc } from './procs.ts';
import type { System } from './systems.ts';

export interface Params {
  rounds: number;
  s1: { count: number; warmup: number };
  s2: { rates: number[]; durationMs: number; latencyMs: number };
  /** `undici`: our graceful closed loop (default); `autocannon`: cuts requests in flight at the end. */
  s3: { connections: number; durationMs: number; generator?: 'undici' | 'autocannon' };
  /** `perWorker` streams per worker, the first left out when `skipFirst` (it paid for the connection). */
  s4: { concurrency: number[]; chunks: number; firstChunkDelayMs: number; intervalMs: number; perWorker: number; skipFirst: boolean };
  s5: { openStreams: number; chunks: number; intervalMs: number };
  /** The search scenario (search.ts): sequential calls per way of searching. */
  search: { count: number; warmup: number };
}

export const fullParams: Params = {
  rounds: 5,
  s1: { count: 2000, warmup: 200 },
  s2: { rates: [500, 1000, 2000], durationMs: 5000, latencyMs: 200 },
  s3: { connections: 64, durationMs: 8000 },
  s4: { concurrency: [100, 500], chunks: 100, firstChunkDelayMs: 50, intervalMs: 20, perWorker: 2, skipFirst: true },
  s5: { openStreams: 1000, chunks: 20, intervalMs: 150 },
  search: { count: 1000, warmup: 100 },
};

export const quickParams: Params = {
  rounds: 2,
  s1: { count: 200, warmup: 50 },
  s2: { rates: [500, 1000, 2000], durationMs: 800, latencyMs: 200 },
  s3: { connections: 64, durationMs: 1500 },
  s4: { concurrency: [100, 500], chunks: 100, firstChunkDelayMs: 50, intervalMs: 20, perWorker: 1, skipFirst: false },
  s5: { openStreams: 1000, chunks: 10, intervalMs: 150 },
  search: { count: 200, warmup: 50 },
};

/** A 1.2 KB chat request, the same bytes for every system. */
function chatBody(stream: boolean): string {
  const system = 'You are a concise assistant for a software team. Answer in plain English, cite file paths when relevant, and prefer short lists. '.repeat(4);
  const user = 'Summarise the trade-offs between reserving quota before a request and settling after it, for a gateway that bills per token; mention crash safety, refunds and latency. '.repeat(4);
  return JSON.stringify({
    model: 'svc-2.1-fast',
    messages: [
      { role: 'system', content: system.trim() },
      { role: 'user', content: user.trim() },
    ],
    max_tokens: 256,
    temperature: 0.7,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}
export const plainBody = chatBody(false);
export const streamBody = chatBody(true);

/** The same request as `chatBody`, for `POST /v1/messages` (the Anthropic Messages API): to weigh that surface against chat. */
function messagesBody(stream: boolean): string {
  const { messages, ...rest } = JSON.parse(chatBody(false)) as { messages: { content: string }[]; model: string; max_tokens: number; temperature: number };
  return JSON.stringify({ ...rest, system: messages[0]!.content, messages: [{ role: 'user', content: messages[1]!.content }], ...(stream ? { stream: true } : {}) });
}
export const plainMessagesBody = messagesBody(false);
export const streamMessagesBody = messagesBody(true);

/** The same request again, for `POST /v1/responses` (the OpenAI Responses API). */
function responsesBody(stream: boolean): string {
  const { messages, max_tokens, ...rest } = JSON.parse(chatBody(false)) as { messages: { content: string }[]; model: string; max_tokens: number; temperature: number };
  return JSON.stringify({ ...rest, instructions: messages[0]!.content, input: messages[1]!.content, max_output_tokens: max_tokens, ...(stream ? { stream: true } : {}) });
}
export const plainResponsesBody = responsesBody(false);
export const streamResponsesBody = responsesBody(true);

export type Metrics = Record<string, number>;

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export interface Scenario {
  id: string;
  script: Partial<Script>;
  run(system: System): Promise<Metrics>;
}

export function scenarios(params: Params): Scenario[] {
  const list: Scenario[] = [
    {
      id: 's1',
      script: { latencyMs: 0 },
      async run(system) {
        const { latenciesUs, failures, stepsUs } = await sequential(system.target(false), plainBody, params.s1.count, params.s1.warmup);
        return { 's1.p50Us': percentile(latenciesUs, 50), 's1.p99Us': percentile(latenciesUs, 99), 's1.failures': failures, ...stepMedians('s1', stepsUs) };
      },
    },
  ];
  for (const rate of params.s2.rates) {
    list.push({
      id: `s2.${rate}`,
      script: { latencyMs: params.s2.latencyMs },
      async run(system) {
        const before = await sampleProc(system.pid);
        const r = await fixedRate(system.target(false), plainBody, rate, params.s2.durationMs);
        const after = await sampleProc(system.pid);
        return {
          [`s2.${rate}.p50Us`]: percentile(r.latenciesUs, 50),
          [`s2.${rate}.p99Us`]: percentile(r.latenciesUs, 99),
          [`s2.${rate}.success`]: r.ok / r.sent,
          // Below saturation a request costs more than in S3: fewer requests share each wake-up and each
          // settlement round, and caches go cold between them. At the top rate it says how near the core is.
          [`s2.${rate}.cpuMsPerReq`]: (after.cpuMs - before.cpuMs) / Math.max(1, r.sent),
        };
      },
    });
  }
  list.push({
    id: 's3',
    script: { latencyMs: 0 },
    async run(system) {
      const before = await sampleProc(system.pid);
      const generator = params.s3.generator === 'autocannon' ? closedLoopAutocannon : closedLoop;
      const r = await generator(system.target(false), plainBody, params.s3.connections, params.s3.durationMs);
      const after = await sampleProc(system.pid);
      // S5 rides on S3: CPU per request of the system's own process under full load, and its RSS then.
      return {
        's3.rps': r.rps,
        's3.errors': r.errors,
        's5.cpuMsPerReq': (after.cpuMs - before.cpuMs) / Math.max(1, r.ok),
        's5.rssMb': after.rssKb / 1024,
      };
    },
  });
  for (const concurrency of params.s4.concurrency) {
    const { chunks, firstChunkDelayMs, intervalMs } = params.s4;
    list.push({
      id: `s4.${concurrency}`,
      script: { latencyMs: 0, chunks, firstChunkDelayMs, intervalMs },
      async run(system) {
        // Starts spread evenly over one stream's duration, so about `concurrency` streams are open at once.
        const staggerMs = firstChunkDelayMs + chunks * intervalMs;
        const { perWorker, skipFirst } = params.s4;
        const before = await sampleProc(system.pid);
        const r = await streams(system.target(true), streamBody, concurrency, chunks, { perWorker, staggerMs, skipFirst });
        const after = await sampleProc(system.pid);
        // What relaying costs the system's own process: CPU per 1,000 chunks delivered (streams started included).
        return { ...streamMetrics(`s4.${concurrency}`, r), [`s4.${concurrency}.cpuMsPerKChunk`]: ((after.cpuMs - before.cpuMs) * 1000) / Math.max(1, r.chunksRelayed) };
      },
    });
  }
  return list;
}

function streamMetrics(prefix: string, r: StreamResult): Metrics {
  return {
    [`${prefix}.ttftP50Us`]: percentile(r.ttftUs, 50),
    [`${prefix}.ttftP99Us`]: percentile(r.ttftUs, 99),
    [`${prefix}.gapP50Us`]: percentile(r.gapsUs, 50),
    [`${prefix}.gapP99Us`]: percentile(r.gapsUs, 99),
    [`${prefix}.lostChunks`]: r.chunksExpected - r.chunksReceived,
    [`${prefix}.incomplete`]: r.streams - r.complete,
    ...stepMedians(prefix, r.stepsUs),
  };
}

/** `<prefix>.step.<name>.p50Us` for each `server-timing` step the system reported. */
function stepMedians(prefix: string, stepsUs: Record<string, number[]>): Metrics {
  const out: Metrics = {};
  for (const [name, values] of Object.entries(stepsUs)) out[`${prefix}.step.${name}.p50Us`] = percentile(values, 50);
  return out;
}

/** S5 (once, after the rounds): peak RSS while `openStreams` streams are open at the same time. */
export function openStreamsScenario(params: Params): Scenario {
  const { openStreams, chunks, intervalMs } = params.s5;
  return {
    id: 's5.open',
    script: { latencyMs: 0, chunks, firstChunkDelayMs: intervalMs, intervalMs },
    async run(system) {
      let peakKb = 0;
      const sampler = setInterval(() => {
        sampleProc(system.pid).then(
          (s) => (peakKb = Math.max(peakKb, s.rssKb)),
          () => undefined,
        );
      }, 100);
      // Halfway through, every stream is open: the process's mappings (and svc's /metrics) tell where the memory is.
      let heap: Metrics = {};
      const probe = setTimeout(
        () => {
          void Promise.all([rssByMapping(system.pid), system.name === 'svc' ? memoryFromMetrics(system.target(false).origin) : {}]).then(
            ([rss, metrics]) =>
              (heap = { 's5.openStreamsMallocHeapMb': rss.heapKb / 1024, 's5.openStreamsAnonymousMb': rss.anonymousKb / 1024, 's5.openStreamsFilesMb': rss.filesKb / 1024, ...metrics }),
            () => undefined,
          );
        },
        (chunks * intervalMs) / 2,
      );
      try {
        const r = await streams(system.target(true), streamBody, openStreams, chunks, { perWorker: 1, staggerMs: 0, skipFirst: false });
        clearTimeout(probe);
        return { 's5.openStreamsRssMb': peakKb / 1024, 's5.openStreamsIncomplete': r.streams - r.complete, ...heap };
      } finally {
        clearInterval(sampler);
      }
    },
  };
}

/** Heap and external memory from svc's Prometheus endpoint (prom-client default metrics), in MB. */
async function memoryFromMetrics(origin: string): Promise<Metrics> {
  try {
    const text = await (await fetch(`${origin}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
    return {
      's5.openStreamsHeapUsedMb': value('nodejs_heap_size_used_bytes'),
      's5.openStreamsHeapTotalMb': value('nodejs_heap_size_total_bytes'),
      's5.openStreamsExternalMb': value('nodejs_external_memory_bytes'),
    };
  } catch {
    return {};
  }
}

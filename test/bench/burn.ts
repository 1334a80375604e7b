/**
 * Does svc's time to first token under many streams follow from its CPU per chunk alone? S4's streams, run
 * through `direct`, the passthrough, the passthrough made to spin `--burn-us` of CPU per relayed chunk (and
 * nothing else: its way to the upstream is the passthrough's), and svc, rounds interleaved, in one run.
 * When the burning passthrough's CPU per chunk matches svc's and its first token comes as late, what svc
 * adds is what any Node relay that busy would add on this core.
 *
 *   node test/bench/burn.ts [streams=500] [rounds=4] [--burn-us=5]
 *
 * Prints, per system, the median over rounds of the added time to first token (the system's p50 minus
 * `direct`'s in the same round) and of the CPU per 1,000 chunks relayed, with every round's figures.
 */
import { streams } from './load.ts';
import { pinSelf, sampleProc } from './procs.ts';
import { median } from './report.ts';
import { percentile, streamBody } from './scenarios.ts';
import { startSvc } from './svc.ts';
import { directSystem, LOAD_CORE, SUT_CORE, startPassthrough, startUpstream, type System } from './systems.ts';

const [streamsArg = '500', roundsArg = '4'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const burnUs = Number(process.argv.find((arg) => arg.startsWith('--burn-us='))?.slice('--burn-us='.length) ?? 5);
const concurrency = Number(streamsArg);
const rounds = Number(roundsArg);
const CHUNKS = 100;
const STREAM_MS = 50 + CHUNKS * 20;

pinSelf(LOAD_CORE);
const upstream = await startUpstream('/dev/null');
await upstream.setScript({ latencyMs: 0, chunks: CHUNKS, firstChunkDelayMs: 50, intervalMs: 20 });
const direct = directSystem(upstream);
const measured: { label: string; system: System }[] = [
  { label: 'passthrough', system: await startPassthrough(upstream, '/dev/null') },
  { label: `passthrough +${burnUs} µs`, system: await startPassthrough(upstream, '/dev/null', SUT_CORE, [], burnUs) },
  { label: 'svc', system: await startSvc(upstream, '/dev/null') },
];

/** One S4 round of `system`: its time to first token (p50, µs) and CPU per 1,000 chunks (ms). */
async function round(system: System): Promise<{ ttftUs: number; cpuMs: number }> {
  const before = await sampleProc(system.pid);
  const r = await streams(system.target(true), streamBody, concurrency, CHUNKS, { perWorker: 2, staggerMs: STREAM_MS, skipFirst: true });
  const after = await sampleProc(system.pid);
  return { ttftUs: percentile(r.ttftUs, 50), cpuMs: ((after.cpuMs - before.cpuMs) * 1000) / Math.max(1, r.chunksRelayed) };
}

const added = new Map<string, number[]>(measured.map(({ label }) => [label, []]));
const cpu = new Map<string, number[]>(measured.map(({ label }) => [label, []]));
try {
  for (let i = 0; i < rounds; i++) {
    const baseline = await round(direct);
    for (const { label, system } of i % 2 === 0 ? measured : [...measured].reverse()) {
      const r = await round(system);
      added.get(label)!.push((r.ttftUs - baseline.ttftUs) / 1000);
      cpu.get(label)!.push(r.cpuMs);
    }
  }
} finally {
  for (const { system } of measured) await system.stop();
  await upstream.stop();
}
process.stdout.write(`S4 at ${concurrency} streams, ${rounds} rounds interleaved: added TTFT p50 (ms) and CPU ms / 1,000 chunks, median [rounds]\n`);
for (const { label } of measured) {
  const ttft = added.get(label)!;
  const perChunk = cpu.get(label)!;
  process.stdout.write(
    `${label.padEnd(20)} +${median(ttft).toFixed(3)} [${ttft.map((v) => v.toFixed(2)).join(' ')}]   ${median(perChunk).toFixed(1)} [${perChunk.map((v) => v.toFixed(0)).join(' ')}]\n`,
  );
}
process.exit(0);

/**
 * `npm run fuzz [-- --seed=N] [-- --count=N] [-- --concurrency=N] [-- --hang-ms=N]`: the seeded fuzz of every
 * route and GraphQL operation against two instances on real PostgreSQL and Redis (test/fuzz/fuzz.ts).
 * Prints a table per route and the first findings; exits 1 when anything must-not-happen happened.
 * Defaults: a random seed (printed, to replay), 10,000 requests, 16 in flight, 5 s for a hang.
 */
import { clean, formatReport, fuzz } from './fuzz.ts';
import { startFuzzBed } from './setup.ts';

const args = process.argv.slice(2);
const option = (name: string) => {
  const inline = args.find((a) => a.startsWith(`--${name}=`));
  if (inline) return inline.slice(name.length + 3);
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const number = (name: string, fallback: number) => {
  const raw = option(name);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`fuzz: --${name} must be a whole number (got ${raw})\n`);
    process.exit(2);
  }
  return value;
};
const seed = number('seed', Math.floor(Math.random() * 2 ** 31));
const count = number('count', 10_000);
const concurrency = number('concurrency', 16);
const hangMs = number('hang-ms', 5_000);

process.stdout.write(`fuzz: seed ${seed}, ${count} requests, ${concurrency} in flight, two instances on real PostgreSQL + Redis\n`);
const bed = await startFuzzBed();
let ok: boolean;
try {
  process.stdout.write(`fuzz: ${bed.target.routes.length} routes registered; instances at ${bed.target.urls.join(', ')}\n`);
  const report = await fuzz(bed.target, { seed, count, concurrency, hangMs, onProgress: (done) => process.stdout.write(`fuzz: ${done}/${count}\n`) });
  process.stdout.write(`\n${formatReport(report)}\n`);
  ok = clean(report);
  process.stdout.write(ok ? '\nfuzz: clean\n' : `\nfuzz: FOUND PROBLEMS (replay with --seed=${seed} --count=${count})\n`);
} finally {
  await bed.close();
}
process.exit(ok ? 0 : 1);

/**
 * `npm run drill [-- --only=kill,pg,redis]`: the failure drills (docs/testing.md, "Failure drills") against real svc
 * processes on real PostgreSQL and Redis. Prints each drill's figures; exits 1 if one did not hold.
 */
import { killDrill, type DrillResult } from './kill.ts';
import { postgresDrill } from './postgres.ts';
import { redisDrill } from './redis.ts';

const only = process.argv
  .slice(2)
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const drills: [string, () => Promise<DrillResult>][] = [
  ['kill', killDrill],
  ['pg', postgresDrill],
  ['redis', redisDrill],
];

let failed = 0;
for (const [name, drill] of drills) {
  if (only && !only.includes(name)) continue;
  process.stdout.write(`drill ${name}: running…\n`);
  const started = Date.now();
  try {
    const result = await drill();
    process.stdout.write(`drill ${name}: ${result.name} — ${result.ok ? 'HELD' : 'FAILED'} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    for (const line of result.lines) process.stdout.write(`  ${line}\n`);
    if (!result.ok) failed += 1;
  } catch (error) {
    failed += 1;
    process.stdout.write(`drill ${name}: ERROR ${(error as Error).stack ?? String(error)}\n`);
  }
}
process.exit(failed === 0 ? 0 : 1);

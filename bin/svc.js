#!/usr/bin/env node
// The `svc` command's launcher. The CLI itself (svc.ts) is TypeScript run by Node's type stripping, which
// needs Node >= 22.18; on an older Node this re-runs it with the project's pinned Node 24, or says why not.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const cli = fileURLToPath(new URL('./svc.ts', import.meta.url));

if (major > 22 || (major === 22 && minor >= 18)) {
  await import('./svc.ts');
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(`svc needs Node 22.18 or newer (this is ${process.version}); run \`npm ci\` in the project to get its pinned Node 24.\n`);
    process.exit(1);
  }
  const result = spawnSync(pinned, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

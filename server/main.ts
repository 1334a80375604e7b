/**
 * Starts svc: reads config (exits 1 naming the bad key), builds the web app if it is missing
 * (`--build-missing`, used by `npm start`), then serves on `server.port`.
 */
import { existsSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import { resolve } from 'node:path';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config/config.ts';
import { createLogger } from './log.ts';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`svc: ${error.message}\n`);
  process.exit(1);
}
const log = createLogger(config);

if (process.argv.includes('--build-missing') && !existsSync(resolve(config.web.distDir, 'index.html'))) {
  log.info('building the web app (first start)…');
  const { build } = await import('vite');
  await build({ configFile: resolve(import.meta.dirname, '../vite.config.ts'), logLevel: 'warn' });
}

const app = await buildApp(config, { logger: log });
await app.listen({ port: config.server.port, host: config.server.host });
log.info({ url: config.server.baseUrl }, `svc is listening; open ${config.server.webUrl}/pricing`);
// With NODE_COMPILE_CACHE (as `npm start` sets it) every module loaded so far is written now, not only at a
// clean exit: the next start reads its TypeScript already stripped and never loads Node's type stripper
// (a WebAssembly module, ~10 MB of memory for as long as the process runs).
flushCompileCache();

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

/**
 * Builds the React app in `web/` into `dist/web`, which the Fastify server serves (server/http/spa.ts).
 * In development `npx vite` serves the app with hot reload and forwards every server path to the API on
 * :8080, so the page sees the same origin layout as in production. Start the API with
 * SVC_WEB_URL=http://localhost:5173 so its Origin check accepts the dev server's cookie-authenticated
 * requests.
 */
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Absolute paths: `server/main.ts --build-missing` and the e2e tests call build() from any cwd.
const root = fileURLToPath(new URL('./web', import.meta.url));
const outDir = fileURLToPath(new URL('./dist/web', import.meta.url));
const api = 'http://localhost:8080';

export default defineConfig({
  root,
  plugins: [react()],
  build: {
    outDir,
    emptyOutDir: true,
    rolldownOptions: {
      output: {
        // Libraries change far less often than the app: separate chunks stay cached across deploys.
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules[\\/](react|react-dom|react-router|scheduler)[\\/]/, priority: 20 },
            { name: 'vendor', test: /node_modules[\\/]/, priority: 10 },
          ],
        },
      },
    },
  },
  server: {
    proxy: {
      // ws: the graphql-ws subscriptions share this path with HTTP queries.
      '/graphql': { target: api, ws: true },
      '/api': { target: api },
      '/v1': { target: api },
      '/oauth': { target: api },
    },
  },
});

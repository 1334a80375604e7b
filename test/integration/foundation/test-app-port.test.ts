/**
 * The test harness's own start: the port is chosen before the app is built (its URLs name it), so another
 * socket on the machine can take it before `listen`. CI once failed a whole browser suite on that race;
 * the harness must make the start again on a new port instead.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { realMode, startApp } from '../../helpers/app.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
const squatters: Server[] = [];

beforeAll(async () => {
  mode = await realMode();
});

afterAll(async () => {
  await Promise.all(squatters.map((server) => new Promise((resolve) => server.close(resolve))));
  await mode?.cleanup();
});

it('starts on a new port when the chosen one is taken before listen', async () => {
  const tried: string[] = [];
  const testApp = await startApp(mode.config, {
    beforeListen: async (app) => {
      const url = app.services.config.server.baseUrl;
      tried.push(url);
      if (tried.length > 1) return;
      // Another socket takes the port between the choice and the listen.
      const squatter = createServer();
      squatters.push(squatter);
      await new Promise<void>((resolve) => squatter.listen(Number(new URL(url).port), '127.0.0.1', resolve));
    },
  });
  try {
    expect(tried).toHaveLength(2);
    expect(testApp.url).toBe(tried[1]);
    expect(testApp.config.server.baseUrl).toBe(testApp.url);
    expect((await fetch(`${testApp.url}/healthz`)).status).toBe(200);
  } finally {
    await testApp.close();
  }
});

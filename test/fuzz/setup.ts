/**
 * What the fuzzer runs against: two instances of svc on one real PostgreSQL database and one Redis key
 * prefix (startApp, as the tests boot it), a scripted upstream behind them, and a member on the largest
 * package with an API key and a web session. The per-IP limit is raised so the fuzz reaches the routes
 * behind it (the limiter itself is tested in test/security/hardening.test.ts).
 */
import { registeredRoutes } from '../../server/http/route-table.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { seed } from '../helpers/seed.ts';
import type { FuzzTarget } from './fuzz.ts';

export interface FuzzBed {
  target: FuzzTarget;
  apps: TestApp[];
  upstream: ScriptedUpstream;
  close(): Promise<void>;
}

export async function startFuzzBed(): Promise<FuzzBed> {
  const mode = await realMode();
  const upstream = await startScriptedUpstream({ recordBodies: false, defaults: { chunks: 4 } });
  const apps: TestApp[] = [];
  const close = async () => {
    await Promise.allSettled(apps.map((app) => app.close()));
    await upstream.close();
    await mode.cleanup();
  };
  try {
    for (let i = 0; i < 2; i++) {
      apps.push(await startApp(mode.config, { config: { rateLimits: { ipPerMinute: 100_000_000 } }, env: { SVC_UPSTREAM_URL: upstream.url } }));
    }
    const credentials = async () => {
      const member = await seed(apps[0]!).member({ tag: 'fuzz', planPackage: 'max_x20' });
      return { key: await member.key('fuzz'), cookie: member.web.cookie! };
    };
    const target: FuzzTarget = { urls: apps.map((app) => app.url), routes: registeredRoutes(apps[0]!.app), credentials: await credentials(), refresh: credentials };
    return { target, apps, upstream, close };
  } catch (error) {
    await close();
    throw error;
  }
}

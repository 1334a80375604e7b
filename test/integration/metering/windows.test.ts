/**
 * Every window counts, not only the day (issue 15 item 9: an admission that checked only the day pool
 * passed every test). A pool whose week (or month) runs out refuses with 402 naming that window, in Redis
 * and in embedded SQL mode alike.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { embeddedMode, realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';

const params = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'Which window ran out?' }], max_tokens: 100 };
const requestBytes = Buffer.byteLength(JSON.stringify(params));
// Fast class at 70 % off: 42,000 / 84,000 micros per 1M tokens.
const reservation = Math.ceil((requestBytes * 42_000 + 100 * 84_000) / 1_000_000);
/** One micro short of the worst case: this window alone refuses the request. */
const short = ((reservation - 1) / 1_000_000).toFixed(6);

function plans(week: string, month: string) {
  return {
    ...defaultPlans,
    free: { ...defaultPlans.free, pools: { fast: { day: 1, week, month }, premium: { day: 1, week: 5, month: 20 } } },
  };
}

let upstream: ScriptedUpstream;
beforeAll(async () => {
  upstream = await startScriptedUpstream();
});
afterAll(() => upstream?.close());

for (const modeName of ['redis', 'embedded'] as const) {
  describe(`${modeName}: week and month pools`, () => {
    for (const [window, config] of [
      ['week', plans(short, '100')],
      ['month', plans('100', short)],
    ] as const) {
      it(`refuses once the ${window} pool cannot cover the worst case, while the day pool still could`, async () => {
        const mode = modeName === 'redis' ? await realMode() : embeddedMode();
        const app: TestApp = await startApp(mode.config, { config: { plans: config }, env: { SVC_UPSTREAM_URL: upstream.url } });
        try {
          const requestsBefore = upstream.stats.requests;
          const member = await seed(app).member();
          const { client } = await member.withKey();
          const error = (await client.chat.completions.create(params).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
          expect(error.status).toBe(402);
          expect(error.code).toBe('quota_exceeded');
          expect((error.error as { message: string }).message).toContain(`${window === 'week' ? 'weekly' : 'monthly'} pool`);
          expect(upstream.stats.requests).toBe(requestsBefore);
        } finally {
          await app.close();
          await mode.cleanup();
        }
      });
    }
  });
}

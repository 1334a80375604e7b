/**
 * The public plan and model catalogue: REST and GraphQL (HTTP and graphql-ws) return the same data,
 * computed from config, in both modes.
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedMode, realMode, startApp, type TestApp } from '../../helpers/app.ts';

const MONEY = 'amountMicros amount currency';
const PLANS_QUERY = `{
  plans {
    id name description requestsPerMinute
    packages { id name interval multiplier price { ${MONEY} } pools { class window limit { ${MONEY} } } }
  }
}`;
const MODELS_QUERY = `{
  models {
    id class tierLabel intendedUse maxOutputTokens routesTo
    price { perTokens discount input { list { ${MONEY} } effective { ${MONEY} } } output { list { ${MONEY} } effective { ${MONEY} } } }
  }
}`;

/** `statuses`: what GraphQL over HTTP allows for the case (errors-only answers may be 200 or 400). */
async function graphql(url: string, query: string, statuses: number[] = [200]) {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  expect(statuses).toContain(response.status);
  return (await response.json()) as { data?: any; errors?: any[] };
}

for (const mode of ['real', 'embedded'] as const) {
  describe(`plan and model catalogue (${mode})`, () => {
    let testApp: TestApp;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      const setup = mode === 'real' ? await realMode() : embeddedMode();
      cleanup = setup.cleanup;
      testApp = await startApp(setup.config);
    });
    afterAll(async () => {
      await testApp?.close();
      await cleanup?.();
    });

    it('GET /api/membership/plans and GraphQL plans agree', async () => {
      const response = await fetch(`${testApp.url}/api/membership/plans`);
      expect(response.status).toBe(200);
      const rest = (await response.json()) as { ok: boolean; currency: string; promotion: unknown; plans: unknown[] };
      expect(rest.ok).toBe(true);
      expect(rest.currency).toBe('USD');
      expect(rest.promotion).toEqual({ fast: 0.7, premium: 0.75 });

      const gql = await graphql(testApp.url, PLANS_QUERY);
      expect(gql.errors).toBeUndefined();
      expect(gql.data.plans).toEqual(rest.plans);
    });

    it('plans are Free, Pro and Max with the x5/x20 packages and pools per class and window', async () => {
      const { data } = await graphql(testApp.url, PLANS_QUERY);
      expect(data.plans.map((plan: { id: string }) => plan.id)).toEqual(['free', 'pro', 'max']);
      const max = data.plans[2];
      expect(max.packages.map((pkg: any) => [pkg.id, pkg.price.amount, pkg.price.currency, pkg.multiplier])).toEqual([
        ['max_x5', '19.00', 'USD', 5],
        ['max_x20', '39.00', 'USD', 20],
      ]);
      const pro = data.plans[1].packages[0];
      expect(pro.price).toEqual({ amountMicros: 9_000_000, amount: '9.00', currency: 'USD' });
      const proFastDay = pro.pools.find((pool: any) => pool.class === 'fast' && pool.window === 'day');
      const x20FastDay = max.packages[1].pools.find((pool: any) => pool.class === 'fast' && pool.window === 'day');
      expect(proFastDay.limit.amountMicros).toBe(3_000_000);
      expect(x20FastDay.limit.amountMicros).toBe(20 * 3_000_000);
      const free = data.plans[0].packages[0];
      expect(free.pools).toHaveLength(6);
      expect(free.pools.find((pool: any) => pool.class === 'premium' && pool.window === 'month').limit.amount).toBe('1.00');
    });

    it('models carry list and promoted prices with explicit currency', async () => {
      const { data, errors } = await graphql(testApp.url, MODELS_QUERY);
      expect(errors).toBeUndefined();
      expect(data.models).toHaveLength(11);
      const fast = data.models.find((model: any) => model.id === 'svc-2.1-fast');
      expect(fast.class).toBe('fast');
      expect(fast.price.discount).toBe(0.7);
      expect(fast.price.input.list).toEqual({ amountMicros: 140_000, amount: '0.14', currency: 'USD' });
      expect(fast.price.input.effective).toEqual({ amountMicros: 42_000, amount: '0.042', currency: 'USD' });
      const premium = data.models.find((model: any) => model.id === 'svc-2.1');
      expect(premium.price.output.list.amountMicros).toBe(870_000);
      expect(premium.price.output.effective.amountMicros).toBe(217_500);
      expect(data.models.find((model: any) => model.id === 'auto').routesTo).toBe('svc-2.1-fast');
    });

    it('graphql-ws on the same path answers the same query', async () => {
      const client = createClient({ url: `${testApp.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
      try {
        const result = await new Promise<any>((resolve, reject) => {
          let value: unknown;
          client.subscribe({ query: PLANS_QUERY }, { next: (v) => (value = v), error: reject, complete: () => resolve(value) });
        });
        const rest = (await (await fetch(`${testApp.url}/api/membership/plans`)).json()) as { plans: unknown };
        expect(result.data.plans).toEqual(rest.plans);
      } finally {
        await client.dispose();
      }
    });

    it('GraphQL validation errors are client errors with a code, not internal errors', async () => {
      const { errors } = await graphql(testApp.url, '{ plans { nope } }', [200, 400]);
      expect(errors?.[0]?.message).toContain('nope');
      expect(errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', stage: 'validation' });
      const syntax = await graphql(testApp.url, '{ plans { ', [200, 400]);
      expect(syntax.errors?.[0]?.message).toMatch(/Syntax Error/);
      expect(syntax.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', stage: 'validation' });
    });

    it('a POST to /graphql without a JSON body gets the envelope, not an empty 415', async () => {
      const response = await fetch(`${testApp.url}/graphql`, { method: 'POST' });
      expect(response.status).toBe(415);
      expect(response.headers.get('x-svc-error-code')).toBe('unsupported_media_type');
      expect(((await response.json()) as { code: string }).code).toBe('unsupported_media_type');
    });
  });
}

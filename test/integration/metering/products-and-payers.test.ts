/**
 * The metering pipeline is product-agnostic: any executor plugged into it gets admission, refunds and a
 * ledger row that records its product and unit; and the payer, not the caller, is charged. Real
 * PostgreSQL and Redis.
 */
import { settled } from '../../helpers/app.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor, TurnPlan } from '../../../server/metering/executor.ts';
import type { Metered, MeterUnit, Product, Turn } from '../../../server/metering/turn.ts';
import { UpstreamFailure } from '../../../server/metering/upstream-failure.ts';
import { sha256Hex } from '../../../server/modules/identity/credential-token.ts';
import type { Payer, Principal } from '../../../server/authz/principal.ts';
import { ledgerRows, startHarness, type Harness } from '../gateway/harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

/** An executor that "produces" what it is told, or fails before output. */
class ScriptedExecutor implements Executor<{ produce: Metered | null }, { delivered: Metered }> {
  async execute(turn: Turn, call: { produce: Metered | null }) {
    turn.deployment = 'scripted';
    if (!call.produce) throw new UpstreamFailure('upstream_unavailable', 'The scripted backend is down.', 503);
    turn.metered = call.produce;
    turn.output = true;
    return { delivered: call.produce };
  }
}
const executor = new ScriptedExecutor();

function plan(product: Product, produce: Metered | null, modelId = 'svc-2.1'): TurnPlan<{ produce: Metered | null }, { delivered: Metered }> {
  const model = h.app.app.services.registry.get(modelId)!;
  return { executor, product, model, stream: false, worstCase: { inputTokens: 1000, outputTokens: 5000 }, call: { produce } };
}

async function principalOf(key: string): Promise<Principal> {
  return h.app.app.services.identity.authenticateBearer(`Bearer ${key}`);
}

const origin = () => ({ ip: '203.0.113.9', traceId: `mbr_products${Date.now()}${Math.random().toString(36).slice(2, 8)}`, clientRequestId: null });

async function poolUsed(payer: Payer, cls: 'fast' | 'premium'): Promise<number> {
  const report = await h.app.app.services.usage.report(payer);
  return report.pools.find((pool) => pool.class === cls && pool.window === 'day')!.used.amountMicros;
}

describe('one pipeline, every product', () => {
  it('writes a ledger row per product kind, with its unit beside the tokens', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const principal = await principalOf(member.key);
    const cases: [Product, MeterUnit | null, number | null][] = [
      ['chat', null, null],
      ['search', 'search', 1],
      ['image', 'image', 2],
      ['speech', 'audio_second', 12.5],
      ['music', 'audio_second', 30],
    ];
    for (const [product, unit, quantity] of cases) {
      const produce: Metered = { inputTokens: 100, outputTokens: 400, ...(unit ? { unit: { kind: unit, quantity: quantity! } } : {}) };
      const result = await h.app.app.services.pipeline.run(principal, plan(product, produce), origin());
      expect(result.delivered).toEqual(produce);
    }
    const rows = await ledgerRows(h.database, member.accountId, cases.length);
    expect(rows.map((row) => [row.product, row.unit, row.unit_quantity === null ? null : Number(row.unit_quantity)])).toEqual(cases);
    // svc-2.1 at 75 % off: 108,750 / 217,500 micros per 1M tokens → 100 in + 400 out = 97.875 → 98.
    for (const row of rows) {
      expect(row.status).toBe('ok');
      expect(Number(row.cost_micros)).toBe(98);
      expect(row.input_tokens).toBe(100);
      expect(row.output_tokens).toBe(400);
    }
    await settled(h.app);
    expect(await poolUsed(principal.payer, 'premium')).toBe(98 * cases.length);
  });

  it('refunds a product that fails before output, and says so', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const principal = await principalOf(member.key);
    const failure = await h.app.app.services.pipeline.run(principal, plan('search', null), origin()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'upstream_unavailable', options: { debug: { quotaRefunded: true, upstreamHost: 'scripted' } } });
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ product: 'search', status: 'refunded', cost_micros: '0' });
    await settled(h.app);
    expect(await poolUsed(principal.payer, 'premium')).toBe(0);
  });
});

describe('payers', () => {
  it('meters an organisation payer to the organisation’s pools, not the caller’s', async () => {
    const member = await h.member();
    // The organisation payer stub: an account of its own on the Pro package (the enterprise module makes
    // real ones); its keys resolve to a principal whose payer is the organisation.
    const org = await h.member({ planPackage: 'pro' });
    const token = `svc_ent_stub${Date.now()}${Math.random().toString(36).slice(2)}`;
    const hash = sha256Hex(token);
    const caller = await principalOf(member.key);
    h.app.app.services.identity.registerResolver({
      prefix: 'svc_ent_',
      label: 'enterprise key',
      resolve: async (tokenHash) =>
        tokenHash === hash
          ? {
              principal: { ...caller, payer: { kind: 'organisation', id: org.accountId, package: 'pro' }, credential: { kind: 'enterprise_key', id: 'stub-key' } },
              expiresAt: null,
              idleMs: null,
              lastUsedAt: 0,
              touch: null,
              disabled: false,
            }
          : null,
    });
    const response = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1', messages: [{ role: 'user', content: 'bill the organisation' }] }),
    });
    expect(response.status).toBe(200);
    const [row] = await ledgerRows(h.database, member.accountId, 1);
    expect(row).toMatchObject({ payer_kind: 'organisation', payer_id: org.accountId, credential_kind: 'enterprise_key', channel: 'enterprise' });
    expect(Number(row!.cost_micros)).toBeGreaterThan(0);
    await settled(h.app);
    const orgPayer: Payer = { kind: 'organisation', id: org.accountId, package: 'pro' };
    expect(await poolUsed(orgPayer, 'premium')).toBe(Number(row!.cost_micros));
    expect(await poolUsed(caller.payer, 'premium')).toBe(0);
    // The organisation's history shows the row; the member's own does not.
    expect((await h.app.app.services.usage.history(orgPayer, {})).nodes.map((node) => node.requestId)).toEqual([row!.request_id]);
    expect((await h.app.app.services.usage.history(caller.payer, {})).nodes).toEqual([]);
  });
});

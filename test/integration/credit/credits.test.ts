/**
 * Prepaid credit (issue 51 item 4) through the real app on two instances sharing PostgreSQL and Redis:
 * the balance is always the sum of the entries; a code redeems once under concurrent tries from both
 * instances; a top-up paid by a Stripe notice replayed concurrently is credited once; and turns paid from
 * credit once the pool is exhausted, run concurrently, never take the balance below zero and are charged
 * at list price (what they did not use comes back); a credit-paid turn whose instance died is settled by
 * the sweeper like a pool reservation (its unused credit returned once, a stream billed at its checkpoint).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor, TurnPlan } from '../../../server/metering/executor.ts';
import type { Metered, Turn } from '../../../server/metering/turn.ts';
import type { RawNotification } from '../../../server/modules/billing/providers/provider.ts';
import { startStripeFake, type StripeFake } from '../../fixtures/stripe-fake.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { insertLedgerRows } from '../../../server/metering/ledger.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { realMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { addMember, applyFor, organisationKey } from '../../helpers/enterprise.ts';
import { seed, type Person } from '../../helpers/seed.ts';
import { StuckStream } from '../../helpers/stuck-stream.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;
let stripe: StripeFake;
let upstream: ScriptedUpstream;
let admin: Person;

beforeAll(async () => {
  setup = await realMode();
  stripe = await startStripeFake();
  upstream = await startScriptedUpstream();
  const st = stripe.config();
  const options = {
    config: { payments: { stripe: st.config, sandbox: { enabled: true } }, rateLimits: { ipPerMinute: 100_000, concurrentStreamsPerAccount: 1000 } },
    env: { ...st.env, SVC_UPSTREAM_URL: upstream.url },
  };
  a = await startApp(setup.config, options);
  b = await startApp(setup.config, options);
  admin = await seed(a).staff('admin');
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await Promise.allSettled([stripe?.close(), upstream?.close()]);
  await setup?.cleanup();
});

async function mint(body: Record<string, unknown>): Promise<{ batch: { id: string }; codes: string[] }> {
  const response = await admin.web.fetch('/api/membership/credits/code-batches', { body });
  const json = (await response.json()) as { batch: { id: string }; codes: string[] };
  expect(response.status, JSON.stringify(json)).toBe(201);
  return json;
}

async function balanceOf(accountId: string): Promise<{ balance: number; sum: number; count: number }> {
  const { rows } = await setup.database.query(
    `select (select coalesce(balance_micros, 0) from credit_balance where account_id = $1)::bigint as balance,
            (select coalesce(sum(amount_micros), 0) from credit_entry where account_id = $1)::bigint as sum,
            (select count(*) from credit_entry where account_id = $1)::int as count`,
    [accountId],
  );
  const row = rows[0] as { balance: string | null; sum: string; count: number };
  return { balance: Number(row.balance ?? 0), sum: Number(row.sum), count: row.count };
}

async function notify(app: TestApp, notice: RawNotification): Promise<number> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(notice.headers)) if (typeof value === 'string') headers[name] = value;
  const response = await fetch(`${app.url}/api/membership/payments/stripe/notify`, { method: 'POST', headers, body: new Uint8Array(notice.body) });
  await response.text();
  return response.status;
}

describe('credit codes', () => {
  it('staff mint a batch, export it as CSV, and members redeem it; members may not mint', async () => {
    const { batch, codes } = await mint({ value: '2.50', count: 3, usesPerCode: 1, note: 'launch, "friends"' });
    expect(codes).toHaveLength(3);
    for (const code of codes) expect(code).toMatch(/^SVC(-[A-Z2-9]{4}){4}$/);
    const csv = await admin.web.fetch(`/api/membership/credits/code-batches/${batch.id}/codes.csv`);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe('code,value,currency,uses_left,expires_at,note');
    expect(lines.slice(1).map((line) => line.split(',')[0]).sort()).toEqual([...codes].sort());
    expect(lines[1]).toContain('2.50,USD,1,,"launch, ""friends"""');

    const member = await seed(a).member({ tag: 'redeemer' });
    const refused = await member.web.fetch('/api/membership/credits/code-batches', { body: { value: '1', count: 1 } });
    expect(refused.status).toBe(403);
    // Case, spaces and dashes do not matter; the key can redeem too (the CLI's way).
    const key = await member.key();
    const typed = codes[0]!.toLowerCase().replace(/-/g, ' ');
    const redeemed = await fetch(`${a.url}/api/membership/credits/redeem`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ code: typed }) });
    const body = (await redeemed.json()) as { entry: { kind: string; amount: { amountMicros: number } }; credit: { balance: { amountMicros: number } } };
    expect(redeemed.status, JSON.stringify(body)).toBe(200);
    expect(body.entry).toMatchObject({ kind: 'code', amount: { amountMicros: 2_500_000 } });
    expect(body.credit.balance.amountMicros).toBe(2_500_000);
    const again = await member.web.fetch('/api/membership/credits/redeem', { body: { code: codes[0] } });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { code: string }).code).toBe('not_found');
  });

  it('a single-use code redeemed by 12 members at once, on two instances, credits exactly one', async () => {
    const { codes } = await mint({ value: '5', count: 1 });
    const members = await Promise.all(Array.from({ length: 12 }, (_, i) => seed(a).member({ tag: `race${i}` })));
    const answers = await Promise.all(members.map((member, i) => member.web.at((i % 2 ? b : a).url).fetch('/api/membership/credits/redeem', { body: { code: codes[0] } })));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status !== 200).every((status) => status === 404)).toBe(true);
    const { rows } = await setup.database.query(`select count(*)::int as n from credit_entry where kind = 'code' and reference = $1`, [codes[0]]);
    expect((rows[0] as { n: number }).n).toBe(1);
    const audited = await setup.database.query(`select count(*)::int as n from audit_log where action = 'credit:redeem' and target_id = $1`, [codes[0]]);
    expect((audited.rows[0] as { n: number }).n).toBe(1);
  });

  it('a multi-use code: one member trying 10 times at once gets it once; each use is audited', async () => {
    const { codes } = await mint({ value: '1', count: 1, usesPerCode: 3 });
    const member = await seed(a).member({ tag: 'greedy' });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => member.web.at((i % 2 ? b : a).url).fetch('/api/membership/credits/redeem', { body: { code: codes[0] } })));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(9);
    const other = await seed(a).member({ tag: 'second' });
    expect((await other.web.fetch('/api/membership/credits/redeem', { body: { code: codes[0] } })).status).toBe(200);
    expect(await balanceOf(member.id)).toEqual({ balance: 1_000_000, sum: 1_000_000, count: 1 });
  });
});

describe('buying credit through the checkout', () => {
  it('a top-up paid by a notice replayed 8 times at once on two instances is credited once', async () => {
    const member = await seed(a).member({ tag: 'topup' });
    const bought = await member.web.fetch('/api/membership/credits/buy', { body: { amount: '20', provider: 'stripe' } });
    const json = (await bought.json()) as { order: { id: string; amountMinor: number; currency: string; packageId: string; providerTradeNo: string } };
    expect(bought.status, JSON.stringify(json)).toBe(201);
    expect(json.order).toMatchObject({ amountMinor: 2000, currency: 'USD', packageId: 'credit' });
    const delivery = stripe.event('checkout.session.completed', stripe.complete(json.order.providerTradeNo));
    const statuses = await Promise.all(Array.from({ length: 8 }, (_, i) => notify(i % 2 ? b : a, delivery)));
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(await balanceOf(member.id)).toEqual({ balance: 20_000_000, sum: 20_000_000, count: 1 });
    const { rows } = await setup.database.query(`select count(*)::int as n from audit_log where action = 'order:paid' and target_id = $1`, [json.order.id]);
    expect((rows[0] as { n: number }).n).toBe(1);
    // The account's package is untouched: credit is not a plan.
    const pkg = await setup.database.query('select plan_package from account where id = $1', [member.id]);
    expect((pkg.rows[0] as { plan_package: string }).plan_package).toBe('free');
    const order = (await (await member.web.fetch(`/api/membership/orders/${json.order.id}`)).json()) as { order: { state: string } };
    expect(order.order.state).toBe('paid');
  });

  it('refuses amounts outside the configured bounds and providers that are off', async () => {
    const member = await seed(a).member({ tag: 'bounds' });
    for (const amount of ['0', '0.001', '5000', 'ten']) {
      const response = await member.web.fetch('/api/membership/credits/buy', { body: { amount, provider: 'sandbox' } });
      expect(response.status, amount).toBe(400);
      expect(((await response.json()) as { error: { param: string } }).error.param).toBe('amount');
    }
    const off = await member.web.fetch('/api/membership/credits/buy', { body: { amount: '5', provider: 'alipay' } });
    expect(off.status).toBeGreaterThanOrEqual(400);
  });
});

/** An executor that "produces" a fixed amount. */
class ScriptedExecutor implements Executor<{ produce: Metered }, Metered> {
  async execute(turn: Turn, call: { produce: Metered }) {
    turn.deployment = 'scripted';
    await new Promise((resolve) => setTimeout(resolve, 20));
    turn.metered = call.produce;
    turn.output = true;
    return call.produce;
  }
}

describe('paying from credit when a pool is exhausted', () => {
  // Too large for the Free premium day pool (0.05 USD) at any price: every turn meets the exhausted-pool path.
  const worstCase = { inputTokens: 1000, outputTokens: 300_000 };
  const listReserve = Math.ceil((1000 * 435_000 + 300_000 * 870_000) / 1_000_000);
  const produce = { inputTokens: 100, outputTokens: 400 };
  const listCost = Math.ceil((100 * 435_000 + 400 * 870_000) / 1_000_000);

  function plan(app: TestApp): TurnPlan<{ produce: Metered }, Metered> {
    const model = app.app.services.registry.get('svc-2.1')!;
    return { executor: new ScriptedExecutor(), product: 'chat', model, stream: false, worstCase, call: { produce } };
  }

  async function run(app: TestApp, key: string): Promise<'ok' | string> {
    const principal = await app.app.services.identity.authenticateBearer(`Bearer ${key}`);
    const origin = { ip: '203.0.113.7', traceId: `mbr_credit${Date.now()}${Math.random().toString(36).slice(2, 10)}`, clientRequestId: null };
    return app.app.services.pipeline.run(principal, plan(app), origin).then(
      () => 'ok',
      (error: { code?: string }) => error.code ?? 'error',
    );
  }

  it('402 without the opt-in; with it, concurrent turns never take the balance below zero and pay list price', async () => {
    const member = await seed(a).member({ tag: 'spender' });
    const key = await member.key();
    const { codes } = await mint({ value: '1', count: 1 });
    expect((await member.web.fetch('/api/membership/credits/redeem', { body: { code: codes[0] } })).status).toBe(200);
    expect(await run(a, key)).toBe('quota_exceeded');

    const opted = await member.web.fetch('/api/membership/credits/settings', { body: { payFromCredit: true } });
    expect(((await opted.json()) as { credit: { payFromCredit: boolean } }).credit.payFromCredit).toBe(true);
    // 1 USD covers three worst cases at once, not four: of 16 concurrent turns some must wait their turn and be refused.
    expect(3 * listReserve).toBeLessThanOrEqual(1_000_000);
    expect(4 * listReserve).toBeGreaterThan(1_000_000);
    const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => run(i % 2 ? b : a, key)));
    const paid = outcomes.filter((outcome) => outcome === 'ok').length;
    expect(paid).toBeGreaterThanOrEqual(3);
    expect(outcomes.filter((outcome) => outcome !== 'ok').every((outcome) => outcome === 'quota_exceeded')).toBe(true);

    // Every paid turn's unused reservation comes back once it settles.
    await settled(a, b);
    const deadline = Date.now() + 5000;
    let state = await balanceOf(member.id);
    while (state.balance !== 1_000_000 - paid * listCost && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      state = await balanceOf(member.id);
    }
    expect(state.balance).toBe(1_000_000 - paid * listCost);
    expect(state.sum).toBe(state.balance);
    const entries = await setup.database.query(`select kind, min(balance_after_micros)::bigint as low, count(*)::int as n from credit_entry where account_id = $1 group by kind`, [member.id]);
    const byKind = Object.fromEntries((entries.rows as { kind: string; low: string; n: number }[]).map((row) => [row.kind, row]));
    expect(byKind.spend!.n).toBe(paid);
    expect(byKind.refund!.n).toBe(paid);
    expect(Number(byKind.spend!.low)).toBeGreaterThanOrEqual(0);
    // The ledger rows say so, at list price; the pool did not move.
    const rows = await setup.database.query(`select cost_micros, paid_from_credit from usage_ledger where account_id = $1 and status = 'ok'`, [member.id]);
    expect(rows.rows).toHaveLength(paid);
    for (const row of rows.rows as { cost_micros: string; paid_from_credit: boolean }[]) expect(row).toEqual({ cost_micros: String(listCost), paid_from_credit: true });
    const usage = await a.app.services.usage.report((await a.app.services.identity.authenticateBearer(`Bearer ${key}`)).payer);
    expect(usage.pools.find((pool) => pool.class === 'premium' && pool.window === 'day')!.used.amountMicros).toBe(0);
  });

  it("an organisation's admins buy it credit and opt it in; its keys then pay from the organisation's credit, not theirs", async () => {
    const owner = await seed(a).member({ tag: 'org-credit-owner' });
    const admin = await seed(a).member({ tag: 'org-credit-admin' });
    const plain = await seed(a).member({ tag: 'org-credit-member' });
    const outsider = await seed(a).member({ tag: 'org-credit-outsider' });
    const { organisationId } = await applyFor(owner, { organisation: `Credit Org ${Date.now().toString(36)}` });
    const org = organisationId!;
    const verify = (id: string) => setup.database.query('update account set email_verified_at = now() where id = $1', [id]);
    await addMember(owner, org, admin, 'admin', verify);
    await addMember(owner, org, plain, 'member', verify);
    const orgKey = await organisationKey(owner, org);

    // Reading: owner and admins; a plain member 403, an outsider 404 (the organisation is not theirs to learn).
    expect((await outsider.web.fetch(`/api/membership/credits?organisationId=${org}`)).status).toBe(404);
    expect((await plain.web.fetch(`/api/membership/credits?organisationId=${org}`)).status).toBe(403);
    const read = await admin.web.graphql<{ credits: { balance: { amountMicros: number }; payFromCredit: boolean } }>(
      'query($org: ID) { credits(organisationId: $org) { balance { amountMicros } payFromCredit } }',
      { org },
    );
    expect(read.data?.credits).toEqual({ balance: { amountMicros: 0 }, payFromCredit: false });

    // An admin buys it 1 USD through the sandbox: the organisation's credit, not the admin's.
    expect((await plain.web.fetch('/api/membership/credits/buy', { body: { amount: '1', provider: 'sandbox', organisationId: org } })).status).toBe(403);
    const bought = await admin.web.fetch('/api/membership/credits/buy', { body: { amount: '1', provider: 'sandbox', organisationId: org } });
    expect(bought.status).toBe(201);
    const order = ((await bought.json()) as { order: { id: string; organisationId: string | null } }).order;
    expect(order.organisationId).toBe(org);
    expect((await admin.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' })).status).toBe(200);
    expect(await balanceOf(org)).toMatchObject({ balance: 1_000_000, sum: 1_000_000 });
    expect((await balanceOf(admin.id)).balance).toBe(0);
    const entries = await owner.web.fetch(`/api/membership/credits/entries?organisationId=${org}`);
    expect(((await entries.json()) as { entries: { kind: string; reference: string }[] }).entries).toEqual([expect.objectContaining({ kind: 'purchase', reference: order.id })]);

    // Its key is refused once the pool is exhausted, until the organisation opts in (a plain member cannot).
    expect(await run(a, orgKey)).toBe('quota_exceeded');
    expect((await plain.web.fetch('/api/membership/credits/settings', { body: { payFromCredit: true, organisationId: org } })).status).toBe(403);
    const opted = await owner.web.fetch('/api/membership/credits/settings', { body: { payFromCredit: true, organisationId: org } });
    expect(((await opted.json()) as { credit: { payFromCredit: boolean } }).credit.payFromCredit).toBe(true);
    expect((await a.app.services.creditLedger.balance(owner.id)).payFromCredit).toBe(false);
    expect(await run(b, orgKey)).toBe('ok');
    await settled(a, b);
    await expect.poll(async () => (await balanceOf(org)).balance).toBe(1_000_000 - listCost);
    expect((await balanceOf(org)).sum).toBe(1_000_000 - listCost);
  });
});

/** A stream that produced `produced` and then hangs, as on an instance that died mid-stream, until `finish` is called. */
describe('credit-paid turns whose instance died', () => {
  const worstCase = { inputTokens: 1000, outputTokens: 300_000 };
  const listReserve = Math.ceil((1000 * 435_000 + 300_000 * 870_000) / 1_000_000);
  const listCost = (m: Metered) => Math.ceil((m.inputTokens * 435_000 + m.outputTokens * 870_000) / 1_000_000);

  it('are returned by the sweeper (two racing): balance = sum of entries = start − settled turns; a late owner changes nothing', async () => {
    const member = await seed(a).member({ tag: 'crashed' });
    const key = await member.key();
    const { codes } = await mint({ value: '1', count: 1 });
    expect((await member.web.fetch('/api/membership/credits/redeem', { body: { code: codes[0] } })).status).toBe(200);
    expect((await member.web.fetch('/api/membership/credits/settings', { body: { payFromCredit: true } })).status).toBe(200);
    const principal = await b.app.services.identity.authenticateBearer(`Bearer ${key}`);
    const model = b.app.services.registry.get('svc-2.1')!;
    const origin = (tag: string) => ({ ip: '203.0.113.9', traceId: `mbr_crash${tag}${Date.now()}${Math.random().toString(36).slice(2, 8)}`, clientRequestId: null });

    // One turn settles normally: the only thing the member pays in the end, with the two checkpointed/written below.
    const produce = { inputTokens: 100, outputTokens: 400 };
    const normal: TurnPlan<{ produce: Metered }, Metered> = { executor: new ScriptedExecutor(), product: 'chat', model, stream: false, worstCase, call: { produce } };
    await b.app.services.pipeline.run(principal, normal, origin('ok'));
    // Its hold ends once its row is written (settlement's round), not when the turn returns.
    await settled(a, b);

    // A stream paid from credit delivers 250 tokens, is checkpointed, then its instance "dies" (it never settles).
    const stuck = new StuckStream();
    const produced = { inputTokens: 100, outputTokens: 250 };
    const streamOrigin = origin('stream');
    const late = b.app.services.pipeline.run(principal, { executor: stuck, product: 'chat', model, stream: true, worstCase, call: { produced } }, streamOrigin);
    const holdOf = async (requestId: string) => (await setup.database.query(`select checkpoint from credit_hold where request_id = $1`, [requestId])).rows[0] as { checkpoint: unknown } | undefined;
    const streamId = await (async () => {
      for (let i = 0; i < 200; i++) {
        const { rows } = await setup.database.query(`select request_id from credit_hold where account_id = $1`, [member.id]);
        if (rows.length > 0) return (rows[0] as { request_id: string }).request_id;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('the stream never held its credit');
    })();
    // Written by this round, or already by the instance's own (every second).
    await b.app.services.pipeline.checkpoints.checkpoint();
    expect((await holdOf(streamId))?.checkpoint).toMatchObject({ outputTokens: 250, paidFromCredit: true });

    // A turn admitted just before its instance died (nothing delivered), and one whose ledger row was written
    // but whose refund was not.
    const ledger = b.app.services.creditLedger;
    const admittedOnly = `mbr_admitted${Date.now()}`;
    const rowWritten = `mbr_rowwritten${Date.now()}`;
    expect(await ledger.reserveTurn(member.id, admittedOnly, listReserve, 'premium')).toBe(true);
    expect(await ledger.reserveTurn(member.id, rowWritten, listReserve, 'premium')).toBe(true);
    const writtenCost = 7_000;
    await insertLedgerRows(b.app.services.db, 'USD', [
      ledgerEntry(member.id, { requestId: rowWritten, model: 'svc-2.1', routedModel: 'svc-2.1', class: 'premium', costMicros: writtenCost, reservedMicros: listReserve, paidFromCredit: true }),
    ]);
    const held = await balanceOf(member.id);
    expect(held.balance).toBe(1_000_000 - listCost(produce) - 3 * listReserve);
    expect(held.sum).toBe(held.balance);

    // Nothing is swept before the holds' TTL; past it, both instances' sweepers race for them.
    expect(await a.app.services.sweeper.sweep()).toBe(0);
    const past = Date.now() + a.config.gateway.reservationTtlSeconds * 1000 + 60_000;
    await Promise.all([a.app.services.sweeper.sweep(past), b.app.services.sweeper.sweep(past)]);
    const expected = 1_000_000 - listCost(produce) - listCost(produced) - writtenCost;
    const after = await balanceOf(member.id);
    expect(after).toMatchObject({ balance: expected, sum: expected });
    expect((await setup.database.query(`select 1 from credit_hold where account_id = $1`, [member.id])).rows).toHaveLength(0);
    const refunds = await setup.database.query(`select reference, amount_micros from credit_entry where account_id = $1 and kind = 'refund' order by reference`, [member.id]);
    expect(refunds.rows.filter((row) => [admittedOnly, rowWritten, streamId].includes((row as { reference: string }).reference))).toHaveLength(3);
    const rows = await setup.database.query(`select request_id, status, output_tokens, cost_micros, paid_from_credit from usage_ledger where request_id = any($1)`, [[streamId, admittedOnly, rowWritten]]);
    const byId = Object.fromEntries((rows.rows as { request_id: string }[]).map((row) => [row.request_id, row]));
    expect(byId[streamId]).toMatchObject({ status: 'abandoned', output_tokens: 250, cost_micros: String(listCost(produced)), paid_from_credit: true });
    expect(byId[admittedOnly]).toMatchObject({ status: 'abandoned', cost_micros: '0', paid_from_credit: true });
    expect(byId[rowWritten]).toMatchObject({ status: 'ok', cost_micros: String(writtenCost) });

    // The "dead" stream comes back after all: its row was written by the sweeper and its hold is gone, so nothing moves.
    stuck.finish();
    await late;
    await settled(a, b);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await balanceOf(member.id)).toMatchObject({ balance: expected, sum: expected });
    expect((await setup.database.query(`select count(*)::int as n from usage_ledger where request_id = $1`, [streamId])).rows[0]).toEqual({ n: 1 });
  });
});

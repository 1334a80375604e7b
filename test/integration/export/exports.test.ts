/**
 * CSV exports stream (issue 51 item 5): 200,000 usage rows of one account come back chunked, page by page,
 * without the server holding them (its heap grows far less than the file), in order, each once; per-day
 * rows are aggregated by the database; payments and credit entries export too; ranges are checked.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let member: Person;
const ROWS = 200_000;

beforeAll(async () => {
  setup = await realMode();
  app = await startApp(setup.config, { config: { payments: { sandbox: { enabled: true } } } });
  member = await seed(app).member({ tag: 'exporter' });
  // A busy year: 200k requests spread over 2026, written straight into the ledger.
  await setup.database.query(
    `insert into usage_ledger (request_id, account_id, payer_kind, payer_id, credential_kind, credential_id, channel, product, model, routed_model, class, stream,
       input_tokens, output_tokens, estimated, cost_micros, reserved_micros, status, latency_ms, currency, created_at)
     select 'mbr_exp' || g, $1, 'account', $1, 'api_key', 'key_x', 'api', 'chat', case when g % 2 = 0 then 'svc-2.1' else 'svc-2.1-fast' end,
       'svc-2.1', 'premium', false, 100, 200, false, 7, 10, 'ok', 12, 'USD', timestamptz '2026-01-01 00:00:00+00' + (g * interval '150 seconds')
     from generate_series(1, ${ROWS}) as g`,
    [member.id],
  );
}, 120_000);

afterAll(async () => {
  await app?.close();
  await setup?.cleanup();
});

describe('usage export', () => {
  it('streams 200k rows chunked, in order, with bounded server memory', async () => {
    // The app runs in this process: its live heap, after a collection, is what it holds for the export.
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const response = await member.web.fetch('/api/membership/exports/usage.csv?from=2026-01-01&to=2026-12-31');
    expect(response.status).toBe(200);
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    let lines = 0;
    let bytes = 0;
    let chunks = 0;
    let first = '';
    let last = '';
    let carry = '';
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      chunks += 1;
      bytes += chunk.byteLength;
      if (chunks % 10 === 0) {
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
      const text = carry + decoder.decode(chunk, { stream: true });
      const parts = text.split('\r\n');
      carry = parts.pop()!;
      if (lines <= 1 && lines + parts.length > 1) first = parts[1 - lines]!;
      if (parts.length > 0) last = parts.at(-1)!;
      lines += parts.length;
    }
    expect(lines).toBe(ROWS + 1);
    expect(chunks).toBeGreaterThan(20);
    expect(first).toMatch(/^2026-01-01T00:02:30\.000Z,mbr_exp1,chat,svc-2.1-fast,premium,api,key_x,100,200,0.000007,USD,ok,false$/);
    expect(last).toMatch(/,mbr_exp200000,/);
    // The file is ~20 MB; the server never held it (a page is 2,000 rows).
    expect(bytes).toBeGreaterThan(15_000_000);
    expect(peak - before).toBeLessThan(bytes / 4);
    console.log(`export: ${lines} lines, ${(bytes / 1e6).toFixed(1)} MB in ${chunks} chunks; live heap grew at most ${((peak - before) / 1e6).toFixed(1)} MB`);
  }, 120_000);

  it('per day: one row per day and model, summed by the database', async () => {
    const response = await member.web.fetch('/api/membership/exports/usage.csv?from=2026-01-01&to=2026-01-01&granularity=day');
    const rows = (await response.text()).trim().split('\r\n');
    expect(rows[0]).toBe('day,model,requests,input_tokens,output_tokens,cost,paid_from_credit,currency');
    // 575 requests that day (every 150 s from 00:02:30; the 576th is at midnight, the next day): 287 and 288.
    expect(rows.slice(1)).toEqual(['2026-01-01,svc-2.1,287,28700,57400,0.002009,0.00,USD', '2026-01-01,svc-2.1-fast,288,28800,57600,0.002016,0.00,USD']);
  });

  it('payments and credit entries; bad ranges are refused before anything is sent', async () => {
    const bought = await member.web.fetch('/api/membership/credits/buy', { body: { amount: '7', provider: 'sandbox' } });
    const order = ((await bought.json()) as { order: { id: string } }).order;
    expect((await member.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { body: {} })).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const payments = (await (await member.web.fetch(`/api/membership/exports/payments.csv?from=${today}&to=${today}`)).text()).trim().split('\r\n');
    expect(payments).toHaveLength(2);
    expect(payments[1]).toContain(`,${order.id},credit,sandbox,paid,7.00,USD,`);
    const credits = (await (await member.web.fetch(`/api/membership/exports/credits.csv?from=${today}&to=${today}`)).text()).trim().split('\r\n');
    expect(credits[1]).toMatch(new RegExp(`,purchase,7\\.00,7\\.00,USD,${order.id},`));
    for (const query of ['from=2026-02-01&to=2026-01-01', 'from=2025-01-01&to=2026-12-31', 'from=nope&to=2026-01-01', 'to=2026-01-01']) {
      const refused = await member.web.fetch(`/api/membership/exports/usage.csv?${query}`);
      expect(refused.status, query).toBe(400);
    }
  });
});

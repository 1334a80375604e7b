/**
 * The ledger insert on PostgreSQL (COPY on pg's pool, and the prepared insert where COPY finds a turn already
 * written) and on embedded PGlite (through the ORM): each `LedgerEntry` field lands in its column, a field
 * left out reads as null, the latency is rounded to whole milliseconds, text that COPY would read as a
 * separator or an escape arrives as sent, and writing a turn again keeps its first row.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { insertLedgerRows } from '../../../server/metering/ledger.ts';
import { embeddedMode, realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { seed } from '../../helpers/seed.ts';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function open(kind: 'postgres' | 'embedded'): Promise<TestApp> {
  const mode = kind === 'postgres' ? await realMode() : embeddedMode();
  const app = await startApp(mode.config);
  cleanups.push(mode.cleanup, () => app.close());
  return app;
}

describe.each(['postgres', 'embedded'] as const)('ledger rows on %s', (kind) => {
  it('writes every field to its column, once per turn', async () => {
    const app = await open(kind);
    const { db } = app.app.services;
    const member = await seed(app).member();
    const full = ledgerEntry(member.id, {
      clientRequestId: 'client-1',
      credentialKind: 'session_token',
      credentialId: 'tok-1',
      channel: 'cli',
      product: 'image',
      model: 'svc-image',
      routedModel: 'svc-image-2',
      deployment: 'east',
      class: 'premium',
      stream: true,
      inputTokens: 11,
      outputTokens: 22,
      unit: 'image',
      unitQuantity: 2,
      estimated: true,
      costMicros: 123_456,
      reservedMicros: 200_000,
      status: 'client_disconnected',
      upstreamStatus: 502,
      latencyMs: 12.5,
      leaseId: 'lease_abc',
    });
    const bare = ledgerEntry(member.id, { deployment: null, upstreamStatus: null, latencyMs: 0.4 });
    await insertLedgerRows(db, 'EUR', [full, bare]);
    await insertLedgerRows(db, 'EUR', [{ ...full, costMicros: 1, status: 'ok' }]);

    const rows = await db.orm.em
      .getConnection()
      .execute<Record<string, unknown>[]>('select * from usage_ledger where request_id in (?, ?) order by latency_ms desc', [full.requestId, bare.requestId], 'all');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      request_id: full.requestId,
      client_request_id: 'client-1',
      account_id: member.id,
      payer_kind: 'account',
      payer_id: member.id,
      credential_kind: 'session_token',
      credential_id: 'tok-1',
      channel: 'cli',
      product: 'image',
      model: 'svc-image',
      routed_model: 'svc-image-2',
      deployment: 'east',
      class: 'premium',
      stream: true,
      input_tokens: 11,
      output_tokens: 22,
      unit: 'image',
      estimated: true,
      currency: 'EUR',
      status: 'client_disconnected',
      upstream_status: 502,
      latency_ms: 13,
      lease_id: 'lease_abc',
    });
    expect(Number(rows[0]!.unit_quantity)).toBe(2);
    expect(Number(rows[0]!.cost_micros)).toBe(123_456);
    expect(Number(rows[0]!.reserved_micros)).toBe(200_000);
    expect(rows[1]).toMatchObject({ request_id: bare.requestId, deployment: null, upstream_status: null, unit: null, unit_quantity: null, lease_id: null, latency_ms: 0 });
  });

  it('keeps text as sent, and writes the new turns of a batch that repeats one', async () => {
    const app = await open(kind);
    const { db } = app.app.services;
    const member = await seed(app).member();
    expect(db.copy !== null).toBe(kind === 'postgres');
    const first = ledgerEntry(member.id, { costMicros: 10 });
    await insertLedgerRows(db, 'USD', [first]);
    const awkward = ledgerEntry(member.id, { clientRequestId: 'tab\there, back\\slash \\N, new\nline\r, 中文', deployment: '\\N', unit: 'audio_second', unitQuantity: 2.75 });
    // A number that is not finite is null, as JSON would send it.
    const after = ledgerEntry(member.id, { latencyMs: 7.5, upstreamStatus: Number.POSITIVE_INFINITY, stream: true });
    // The repeated turn comes back with other values: its first row stands.
    await insertLedgerRows(db, 'USD', [awkward, { ...first, costMicros: 99, status: 'refunded' }, after]);

    const rows = await db.orm.em
      .getConnection()
      .execute<Record<string, unknown>[]>('select * from usage_ledger where request_id in (?, ?, ?)', [first.requestId, awkward.requestId, after.requestId], 'all');
    const byId = new Map(rows.map((row) => [row.request_id, row]));
    expect(rows).toHaveLength(3);
    expect(byId.get(first.requestId)).toMatchObject({ status: 'ok' });
    expect(Number(byId.get(first.requestId)!.cost_micros)).toBe(10);
    expect(byId.get(awkward.requestId)).toMatchObject({ client_request_id: awkward.clientRequestId, deployment: '\\N', unit: 'audio_second' });
    expect(Number(byId.get(awkward.requestId)!.unit_quantity)).toBe(2.75);
    expect(byId.get(after.requestId)).toMatchObject({ latency_ms: 8, upstream_status: null, stream: true });
  });
});

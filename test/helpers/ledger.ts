import type { LedgerEntry } from '../../server/metering/ledger.ts';

/** A ledger row as the pipeline would write it for a plain chat request of `accountId` (who also pays). */
export function ledgerEntry(accountId: string, overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    requestId: `mbr_entry${process.pid}x${Date.now()}x${Math.random().toString(36).slice(2, 8)}`,
    clientRequestId: null,
    accountId,
    payerKind: 'account',
    payerId: accountId,
    credentialKind: 'api_key',
    credentialId: 'k',
    channel: 'api',
    product: 'chat',
    model: 'svc-2.1-fast',
    routedModel: 'svc-2.1-fast',
    deployment: 'default',
    class: 'fast',
    stream: false,
    inputTokens: 1,
    outputTokens: 2,
    unit: null,
    unitQuantity: null,
    estimated: false,
    costMicros: 0,
    reservedMicros: 0,
    status: 'ok',
    upstreamStatus: 200,
    latencyMs: 1,
    ...overrides,
  };
}

/**
 * The sandbox provider's two buttons: the server signs a sandbox notice for the order and applies it
 * exactly as it would a real provider's, so the page then learns the outcome through `orderUpdated`.
 */
import { useState } from 'react';

export type SandboxOutcome = 'paid' | 'failed';

export function useSandbox(orderId: string): { settle(outcome: SandboxOutcome): Promise<void>; busy: SandboxOutcome | null; problem: unknown } {
  const [busy, setBusy] = useState<SandboxOutcome | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  return {
    busy,
    problem,
    settle: async (outcome) => {
      setBusy(outcome);
      setProblem(null);
      try {
        const response = await fetch(`/api/membership/payments/sandbox/orders/${encodeURIComponent(orderId)}/${outcome === 'paid' ? 'pay' : 'fail'}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        if (!response.ok) throw await restError(response);
      } catch (caught) {
        setProblem(caught);
      } finally {
        setBusy(null);
      }
    },
  };
}

/** The REST error envelope as an Error carrying both languages (useErrorMessage reads `messageZh`). */
async function restError(response: Response): Promise<Error> {
  try {
    const body = (await response.json()) as { error?: { message?: string; messageZh?: string } };
    const error = new Error(body.error?.message ?? `HTTP ${response.status}`) as Error & { messageZh?: string };
    if (body.error?.messageZh) error.messageZh = body.error.messageZh;
    return error;
  } catch {
    return new Error(`HTTP ${response.status}`);
  }
}

/**
 * The sandbox provider's two buttons: the server signs a sandbox notice for the order and applies it
 * exactly as it would a real provider's, so the page then learns the outcome through `orderUpdated`.
 */
import { useMutation } from '@apollo/client/react';
import { useState } from 'react';
import { SANDBOX_PAY_ORDER } from '../graphql/sandbox-pay.mutation.ts';

export type SandboxOutcome = 'paid' | 'failed';

export function useSandbox(orderId: string): { settle(outcome: SandboxOutcome): Promise<void>; busy: SandboxOutcome | null; problem: unknown } {
  const [pay] = useMutation(SANDBOX_PAY_ORDER);
  const [busy, setBusy] = useState<SandboxOutcome | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  return {
    busy,
    problem,
    settle: async (outcome) => {
      setBusy(outcome);
      setProblem(null);
      try {
        await pay({ variables: { orderId, paid: outcome === 'paid' } });
      } catch (caught) {
        setProblem(caught);
      } finally {
        setBusy(null);
      }
    },
  };
}

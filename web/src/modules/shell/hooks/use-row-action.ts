import { useState } from 'react';

/**
 * One row's action at a time (revoke a key, end a session, remove a member…): ask first when there is a
 * question, mark the row busy while it runs, and hand a failure to `setProblem` (cleared before each try).
 */
export function useRowAction(setProblem: (problem: unknown) => void) {
  const [busy, setBusy] = useState<string | null>(null);
  const run = async (rowId: string, question: string | null, action: () => Promise<unknown>) => {
    if (question !== null && !window.confirm(question)) return;
    setProblem(null);
    setBusy(rowId);
    try {
      await action();
    } catch (caught) {
      setProblem(caught);
    } finally {
      setBusy(null);
    }
  };
  return [busy, run] as const;
}

import { describe, expect, it } from 'vitest';
import { LocalGcra } from '../../../server/rate-limit/gcra.ts';

describe('LocalGcra', () => {
  it('allows a burst of `limit`, then one per emission interval', () => {
    const gcra = new LocalGcra();
    const rule = { key: 'k', limit: 3, periodMs: 3000 };
    const t = 1_000_000;
    expect([1, 2, 3].map(() => gcra.check([rule], t).allowed)).toEqual([true, true, true]);
    const denied = gcra.check([rule], t);
    expect(denied.allowed).toBe(false);
    expect(denied.retryAfterMs).toBe(1000);
    expect(gcra.check([rule], t + 999).allowed).toBe(false);
    const again = gcra.check([rule], t + 1000);
    expect(again.allowed).toBe(true);
    expect(again.remaining).toBe(0);
  });

  it('is all or nothing across rules and reports the binding rule', () => {
    const gcra = new LocalGcra();
    const wide = { key: 'ip', limit: 100, periodMs: 60_000 };
    const narrow = { key: 'acct', limit: 1, periodMs: 60_000 };
    const first = gcra.check([wide, narrow], 0);
    expect(first.allowed).toBe(true);
    expect(first.rule.key).toBe('acct');
    const second = gcra.check([wide, narrow], 0);
    expect(second.allowed).toBe(false);
    expect(second.rule.key).toBe('acct');
    // The denied request did not consume the wide rule.
    expect(gcra.check([wide], 0).remaining).toBe(98);
  });
});

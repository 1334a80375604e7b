import { describe, expect, it } from 'vitest';
import { tailMet, targets, type Summary } from '../../bench/report.ts';

/** S2's p99s in µs: the upstream alone (direct), the passthrough and svc, at each rate given. */
function summary(p99Ms: Record<number, { direct: number; passthrough: number; svc: number }>): Summary {
  const out: Summary = { direct: {}, passthrough: {}, svc: {} };
  for (const [rate, figures] of Object.entries(p99Ms)) {
    for (const system of ['direct', 'passthrough', 'svc'] as const) out[system]![`s2.${rate}.p99Us`] = figures[system] * 1000;
  }
  return out;
}

const tail = (s: Summary) => targets(s).filter((t) => t.name.startsWith('S2 '));

describe('the tail target: svc added p99 within 1.5× the passthrough’s', () => {
  it('is checked at 1,000 and 2,000 req/s, as the ratio of the added p99s', () => {
    const list = tail(summary({ 1000: { direct: 210, passthrough: 225.1, svc: 254.5 }, 2000: { direct: 220, passthrough: 256, svc: 294 } }));
    expect(list.map((t) => [t.name, Number(t.value.toFixed(3)), t.met])).toEqual([
      ["S2 1000/s added p99 ÷ passthrough's (+44.5 ÷ +15.1 ms)", 2.947, false],
      ["S2 2000/s added p99 ÷ passthrough's (+74.0 ÷ +36.0 ms)", 2.056, false],
    ]);
  });

  it('is met at exactly 1.5×, missed just above', () => {
    expect(tail(summary({ 1000: { direct: 200, passthrough: 210, svc: 215 } }))[0]!.met).toBe(true);
    expect(tail(summary({ 1000: { direct: 200, passthrough: 210, svc: 215.1 } }))[0]!.met).toBe(false);
  });

  it('leaves out a rate S2 did not run', () => {
    expect(tail(summary({ 500: { direct: 200, passthrough: 210, svc: 250 } }))).toEqual([]);
  });

  it('reads an added p99 at or below zero as met, and a passthrough at or below zero as a bar svc must also be under', () => {
    expect(tailMet(-0.5, 3)).toBe(true);
    expect(tailMet(0, -1)).toBe(true);
    expect(tailMet(0.4, -1)).toBe(false);
    expect(tailMet(0.4, 0)).toBe(false);
    expect(tailMet(Number.NaN, 3)).toBe(false);
    expect(tailMet(4, Number.NaN)).toBe(false);
  });
});

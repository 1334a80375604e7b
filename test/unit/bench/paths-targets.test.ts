/**
 * The paths bench's arithmetic (test/bench/paths.ts, fanout.ts, report.ts): added time over each path's own
 * direct call, targets relative to chat's added time in the same run, and which update a watcher's delivery
 * time is read from.
 */
import { describe, expect, it } from 'vitest';
import { deliveries, usedTotal } from '../../bench/fanout.ts';
import { addedOverDirect } from '../../bench/paths.ts';
import { pathTargets } from '../../bench/report.ts';

const p50 = (ms: Record<string, number>) => Object.fromEntries(Object.entries(ms).map(([name, value]) => [`paths.${name}.p50Us`, value * 1000]));

describe('paths: added over the direct call', () => {
  it('subtracts each path its own direct call: search its backend, the rest the upstream round trip', () => {
    const added = addedOverDirect(p50({ 'chat.direct': 1, chat: 1.4, responses: 1.6, 'search.direct': 0.2, 'search.rest': 1.9, 'search.mcp': 2.4, usage: 2, staff: 3 }));
    expect(added['paths.chat.addedP50Us']).toBeCloseTo(400);
    expect(added['paths.responses.addedP50Us']).toBeCloseTo(600);
    expect(added['paths.search.rest.addedP50Us']).toBeCloseTo(1700);
    expect(added['paths.search.mcp.addedP50Us']).toBeCloseTo(2200);
    expect(added['paths.usage.addedP50Us']).toBeCloseTo(1000);
    expect(added['paths.staff.addedP50Us']).toBeCloseTo(2000);
    expect(added['paths.chat.direct.addedP50Us']).toBeUndefined();
  });

  it('leaves out a path whose direct call was not measured', () => {
    expect(addedOverDirect(p50({ chat: 1.4, 'search.direct': 0.2, 'search.rest': 1 }))).toEqual({ 'paths.search.rest.addedP50Us': 800 });
  });
});

describe('paths: targets relative to chat in the same run', () => {
  const summary = (over: Record<string, number>) => ({
    ...addedOverDirect(p50({ 'chat.direct': 1, chat: 1.4, responses: 1.6, 'search.direct': 0.2, 'search.rest': 0.9, 'search.mcp': 0.95, usage: 2.3, staff: 3.3, ...over })),
    'paths.chat.failures': 0,
    'paths.staff.failures': 0,
  });
  const byName = (list: ReturnType<typeof pathTargets>) => Object.fromEntries(list.map((t) => [t.name.split(' added')[0], t]));

  it('meets a path within chat + 0.3 ms and misses one beyond it', () => {
    const met = byName(pathTargets(summary({})));
    expect(met['search over REST']).toMatchObject({ met: true });
    expect(met['search over REST']!.value).toBeCloseTo(0.7);
    expect(met['search over REST']!.limit).toBe("≤ chat's 0.400 + 0.3 = 0.700");
    expect(met['/v1/responses']).toMatchObject({ met: true });
    const missed = byName(pathTargets(summary({ 'search.mcp': 0.2 + 0.4 + 0.31, responses: 1.75 })));
    expect(missed['search over MCP']).toMatchObject({ met: false });
    expect(missed['/v1/responses']).toMatchObject({ met: false });
  });

  it('allows membership REST and the staff query their own reads: 1 ms and 2 ms over chat', () => {
    const list = byName(pathTargets(summary({})));
    expect(list['membership REST /api/membership/usage']).toMatchObject({ met: true });
    expect(list['GraphQL staffSearch']).toMatchObject({ met: true });
    const over = byName(pathTargets(summary({ usage: 1 + 0.4 + 1.01, staff: 1 + 0.4 + 2.01 })));
    expect(over['membership REST /api/membership/usage']).toMatchObject({ met: false });
    expect(over['GraphQL staffSearch']).toMatchObject({ met: false });
  });

  it('misses when any call failed, and judges nothing without chat', () => {
    const failed = pathTargets({ ...summary({}), 'paths.staff.failures': 3 }).find((t) => t.name === 'paths failed calls');
    expect(failed).toMatchObject({ value: 3, met: false });
    expect(pathTargets(addedOverDirect(p50({ 'search.direct': 0.2, 'search.rest': 1 })))).toEqual([]);
  });

  it('judges the fan-out on delivery p95 ≤ 250 ms and on nothing missed, stale or refused', () => {
    const fanout = { 'fanout.sockets': 10_000, 'fanout.subscribed': 10_000, 'fanout.deliveryP95Us': 180_000, 'fanout.missed': 0, 'fanout.stale': 0 };
    const [p95, lost] = pathTargets(fanout);
    expect(p95).toMatchObject({ value: 180, met: true });
    expect(lost).toMatchObject({ value: 0, met: true });
    const [slow, refused] = pathTargets({ ...fanout, 'fanout.deliveryP95Us': 251_000, 'fanout.subscribed': 9_990 });
    expect(slow).toMatchObject({ met: false });
    expect(refused).toMatchObject({ value: 10, met: false });
  });
});

describe('fan-out: delivery time per turn and socket', () => {
  it('reads the last update before the next turn, from the turn’s start', () => {
    const starts = [1000, 2000, 3000];
    const socket: [number, number][] = [
      [1040, 10],
      [1120, 20],
      [2090, 30],
      [3200, 40],
    ];
    expect(deliveries(starts, [socket], 1000)).toEqual({ delaysMs: [120, 90, 200], missed: 0, stale: 0 });
  });

  it('counts a turn with no update as missed, and an update showing no more used than before as stale', () => {
    const starts = [1000, 2000, 3000];
    const socket: [number, number][] = [
      [1050, 10],
      [3100, 10],
    ];
    expect(deliveries(starts, [socket], 1000)).toEqual({ delaysMs: [50, 100], missed: 1, stale: 1 });
    // Updates after the last turn's window are not that turn's.
    expect(deliveries([1000], [[[2500, 5]]], 1000)).toEqual({ delaysMs: [], missed: 1, stale: 0 });
  });

  it('sums every pool’s used micros in a next message', () => {
    const message = '{"id":"1","type":"next","payload":{"data":{"usageUpdated":{"pools":[{"used":{"amountMicros":120}},{"used":{"amountMicros":0}},{"used":{"amountMicros":45}}]}}}}';
    expect(usedTotal(message)).toBe(165);
  });
});

/**
 * The member's usage surface: `usageHistory` (and its REST twin) read the ledger the gateway wrote, and the
 * `usageUpdated` subscription pushes fresh pools across instances — a watcher on instance B sees a chat
 * made on instance A (both on the same PostgreSQL and Redis). Real clients: `openai`, `graphql-ws`. Many
 * subscriptions of one account share one usage read per wake-up, and never one begun before the change.
 */
import { createClient, type Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { testRedisUrl } from '../../helpers/env.ts';
import { ledgerRows, relaxedLimits, startHarness, type Harness, type Member } from '../gateway/harness.ts';

let h: Harness;
let b: TestApp;

beforeAll(async () => {
  h = await startHarness();
  // Room for the 200 subscriptions of one account below.
  b = await startApp(h.mode.config, { config: { ...relaxedLimits, server: { maxSubscriptionsPerAccount: 1000 } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
});
afterAll(async () => {
  await b?.close();
  await h?.close();
});

// svc-2.1-fast at 70 % off: 42,000 / 84,000 micros per 1M input / output tokens; a turn rounds up.
const fastCost = (input: number, output: number) => Math.ceil((input * 42_000 + output * 84_000) / 1_000_000);

interface HistoryNode {
  requestId: string;
  createdAt: string;
  model: string;
  class: string;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  estimated: boolean;
  cost: { amountMicros: number; amount: string; currency: string };
  status: string;
  channel: string;
  credentialKind: string;
  latencyMs: number;
  clientRequestId: string | null;
  product: string;
  unit: string | null;
  unitQuantity: number | null;
}
interface Page {
  nodes: HistoryNode[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

const HISTORY = `query History($first: Int, $after: String) {
  usageHistory(first: $first, after: $after) {
    nodes { requestId createdAt model routedModel class stream inputTokens outputTokens estimated cost { amountMicros amount currency } status channel credentialKind latencyMs clientRequestId product unit unitQuantity }
    pageInfo { hasNextPage endCursor }
  }
}`;

async function graphql<T>(url: string, key: string | null, query: string, variables: object = {}): Promise<{ data?: T; errors?: { message: string; extensions?: { code?: string } }[] }> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
}

describe('usageHistory', () => {
  it('lists the ledger newest first, page by page, with costs; REST returns the same', async () => {
    const member = await h.member();
    await member.client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'one' }] });
    const stream = await member.client.chat.completions.create({
      model: 'svc-2.1-fast',
      messages: [{ role: 'user', content: 'two' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) void chunk;
    // The upstream reports no usage: svc counts the tokens and marks the row estimated.
    const quiet = await member.client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: '#script {"usage":"absent"}\nthree' }], stream: true });
    for await (const chunk of quiet) void chunk;

    const rows = await ledgerRows(h.database, member.accountId, 3);
    expect(rows).toHaveLength(3);
    const { rows: ordered } = await h.database.query(
      'select request_id, cost_micros, input_tokens, output_tokens, estimated, status from usage_ledger where account_id = $1 order by created_at desc, id desc',
      [member.accountId],
    );

    const first = await graphql<{ usageHistory: Page }>(h.app.url, member.key, HISTORY, { first: 2 });
    expect(first.errors).toBeUndefined();
    expect(first.data!.usageHistory.nodes).toHaveLength(2);
    expect(first.data!.usageHistory.pageInfo.hasNextPage).toBe(true);
    const second = await graphql<{ usageHistory: Page }>(b.url, member.key, HISTORY, { first: 2, after: first.data!.usageHistory.pageInfo.endCursor });
    expect(second.data!.usageHistory.nodes).toHaveLength(1);
    expect(second.data!.usageHistory.pageInfo.hasNextPage).toBe(false);

    const nodes: HistoryNode[] = [...first.data!.usageHistory.nodes, ...second.data!.usageHistory.nodes];
    expect(nodes.map((node) => node.requestId)).toEqual(ordered.map((row) => row.request_id));
    for (const [i, node] of nodes.entries()) {
      const row = ordered[i]!;
      expect(node).toMatchObject({
        model: 'svc-2.1-fast',
        class: 'fast',
        status: 'ok',
        channel: 'api',
        credentialKind: 'api_key',
        inputTokens: row.input_tokens,
        outputTokens: row.output_tokens,
        estimated: row.estimated,
        cost: { amountMicros: Number(row.cost_micros), currency: 'USD' },
      });
      expect(node.inputTokens).toBeGreaterThan(0);
      expect(node.outputTokens).toBeGreaterThan(0);
      expect(node.cost.amountMicros).toBe(fastCost(node.inputTokens, node.outputTokens));
      expect(node.cost.amountMicros).toBeGreaterThan(0);
    }
    expect(nodes.map((node) => node.estimated)).toEqual([true, false, false]);
    expect(nodes.map((node) => node.stream)).toEqual([true, true, false]);

    const rest = await fetch(`${h.app.url}/api/membership/usage/history?first=2`, { headers: { authorization: `Bearer ${member.key}` } });
    expect(rest.status).toBe(200);
    // REST carries every field of a record; the GraphQL page asked for some of them.
    expect(await rest.json()).toMatchObject({ ok: true, ...first.data!.usageHistory });

    // Another account sees none of it.
    const stranger = await h.member();
    const theirs = await graphql<{ usageHistory: Page }>(h.app.url, stranger.key, HISTORY);
    expect(theirs.data!.usageHistory).toEqual({ nodes: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it('refuses the signed-out, bad page sizes and forged cursors', async () => {
    const member = await h.member();
    const anonymous = await graphql(h.app.url, null, HISTORY);
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('sign_in_required');
    const restAnonymous = await fetch(`${h.app.url}/api/membership/usage/history`);
    expect(restAnonymous.status).toBe(401);
    expect((await graphql(h.app.url, member.key, HISTORY, { first: 0 })).errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect((await graphql(h.app.url, member.key, HISTORY, { first: 101 })).errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect((await graphql(h.app.url, member.key, HISTORY, { after: 'not-a-cursor' })).errors?.[0]?.extensions?.code).toBe('invalid_request');
    const rest = await fetch(`${h.app.url}/api/membership/usage/history?first=abc`, { headers: { authorization: `Bearer ${member.key}` } });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ code: 'invalid_request', error: { param: 'first' } });
  });
});

const USAGE_UPDATED = `subscription { usageUpdated { currency pools { class window used { amountMicros } limit { amountMicros } remaining { amountMicros } } } }`;
interface UsageEvent {
  usageUpdated: { currency: string; pools: { class: string; window: string; used: { amountMicros: number }; limit: { amountMicros: number }; remaining: { amountMicros: number } }[] };
}

function wsClient(app: TestApp, connectionParams: Record<string, unknown> | undefined, onClosed?: (code: number) => void): Client {
  return createClient({
    url: `${app.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => undefined, // the close code is asserted instead
    connectionParams,
    on: { closed: (event) => onClosed?.((event as { code: number }).code) },
  });
}

const fastDay = (event: UsageEvent) => event.usageUpdated.pools.find((pool) => pool.class === 'fast' && pool.window === 'day')!;

describe('usageUpdated', () => {
  it('reaches a watcher on instance B when the account chats on instance A, and only that account', async () => {
    const member: Member = await h.member();
    const client = wsClient(b, { authorization: `Bearer ${member.key}` });
    const events = client.iterate<UsageEvent>({ query: USAGE_UPDATED })[Symbol.asyncIterator]();
    try {
      const initial = await events.next();
      expect(initial.done).toBe(false);
      expect(fastDay(initial.value.data!).used.amountMicros).toBe(0);
      expect(b.app.services.usage.events.watching(member.accountId)).toBe(1);

      // Someone else's chat wakes no one here.
      const stranger = await h.member();
      await stranger.client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'not yours' }] });
      await ledgerRows(h.database, stranger.accountId, 1);
      let pending = events.next();
      const quiet = await Promise.race([pending.then(() => 'event' as const), new Promise((resolve) => setTimeout(() => resolve('quiet'), 400))]);
      expect(quiet).toBe('quiet');

      const onA = new OpenAI({ apiKey: member.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
      await onA.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello from A' }] });
      const [row] = await ledgerRows(h.database, member.accountId, 1);
      const billed = Number(row!.cost_micros);
      expect(billed).toBeGreaterThan(0);

      // `pending` (from the race above) is the first update. Updates may show the reservation first; the
      // last one holds exactly what the ledger billed.
      const deadline = Date.now() + 5000;
      let used = -1;
      while (used !== billed && Date.now() < deadline) {
        const next = await Promise.race([pending, new Promise<null>((resolve) => setTimeout(() => resolve(null), deadline - Date.now()))]);
        if (!next || next.done) break;
        pending = events.next();
        const pool = fastDay(next.value.data!);
        used = pool.used.amountMicros;
        expect(pool.remaining.amountMicros).toBe(pool.limit.amountMicros - used);
      }
      expect(used).toBe(billed);
    } finally {
      await events.return?.();
      await client.dispose();
    }
    // The watcher is gone once the client completes.
    await expect.poll(() => b.app.services.usage.events.watching(member.accountId)).toBe(0);
  });

  it('follows a plan change: an open subscription on instance B shows the new package’s limits at once', async () => {
    const member: Member = await h.member();
    const client = wsClient(b, { authorization: `Bearer ${member.key}` });
    const events = client.iterate<UsageEvent>({ query: USAGE_UPDATED })[Symbol.asyncIterator]();
    try {
      const initial = await events.next();
      const freeLimit = fastDay(initial.value.data!).limit.amountMicros;
      expect(freeLimit).toBe(200_000);
      // Payments (or staff) move the account to Pro on instance A.
      await h.app.app.services.planAssignments.assignAsSystem(member.accountId, 'pro', { reason: 'paid order' });
      const next = await Promise.race([events.next(), new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000))]);
      expect(next && !next.done).toBe(true);
      expect(fastDay(next!.value.data!).limit.amountMicros).toBe(3_000_000);
    } finally {
      await events.return?.();
      await client.dispose();
    }
  });

  it('is refused without credentials (sign_in_required) and closes 4403 on bad ones', async () => {
    const anonymous = wsClient(b, undefined);
    try {
      const error = await new Promise<unknown>((resolve) => {
        anonymous.subscribe({ query: USAGE_UPDATED }, { next: (result) => resolve(result.errors), error: resolve, complete: () => resolve('completed') });
      });
      expect(error).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'sign_in_required' }) })]);
    } finally {
      await anonymous.dispose();
    }

    let closeCode: number | undefined;
    const forged = wsClient(b, { authorization: 'Bearer svc_live_notarealkeynotarealkeynotareal' }, (code) => (closeCode = code));
    try {
      await new Promise<void>((resolve) => {
        forged.subscribe({ query: USAGE_UPDATED }, { next: () => resolve(), error: () => resolve(), complete: () => resolve() });
      });
      expect(closeCode).toBe(4403);
    } finally {
      await forged.dispose();
    }
  });
});

/** `perSocket` usageUpdated subscriptions on each of `sockets` sockets to `app`; each list collects the fast day pool's used micros, update by update. */
async function watchMany(app: TestApp, key: string, sockets: number, perSocket: number): Promise<{ updates: number[][]; close(): Promise<void> }> {
  const clients = Array.from({ length: sockets }, () => wsClient(app, { authorization: `Bearer ${key}` }));
  const updates: number[][] = [];
  for (const client of clients) {
    for (let i = 0; i < perSocket; i++) {
      const list: number[] = [];
      updates.push(list);
      client.subscribe<UsageEvent>(
        { query: USAGE_UPDATED },
        {
          next: (result) => list.push(result.errors ? -1 : fastDay(result.data!).used.amountMicros),
          error: () => list.push(-1),
          complete: () => undefined,
        },
      );
    }
  }
  return { updates, close: async () => void (await Promise.all(clients.map((client) => client.dispose()))) };
}

/** Counts the usage-changed messages that name the account (each wakes its watchers on every instance once). */
async function countWakeUps(app: TestApp, accountId: string): Promise<{ count(): number; close(): void }> {
  const redis = new Redis(testRedisUrl);
  let count = 0;
  redis.on('message', (_topic: string, message: string) => {
    if (message.includes(accountId)) count++;
  });
  await redis.subscribe(`${app.config.redis.keyPrefix}usage-changed`);
  return { count: () => count, close: () => redis.disconnect() };
}

describe('usageUpdated with many subscriptions of one account', () => {
  it('reads the usage once per wake-up for all 200 of them, and each gets the update', async () => {
    const member: Member = await h.member();
    const { updates, close } = await watchMany(b, member.key, 10, 20);
    const wakeUps = await countWakeUps(b, member.accountId);
    try {
      await expect.poll(() => updates.every((list) => list.length === 1), { timeout: 15_000 }).toBe(true);
      expect(updates.flat()).toEqual(Array(200).fill(0));
      // The 200 ask the same thing: one shared stream, one watcher of the account (shared-events.ts).
      expect(b.app.services.usage.events.watching(member.accountId)).toBe(1);

      // Every usage report reads PostgreSQL (the package) and Redis (the pools): counted from here.
      const reads = vi.spyOn(b.app.services.usage, 'report');
      const onA = new OpenAI({ apiKey: member.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
      await onA.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'one turn' }] });
      const [row] = await ledgerRows(h.database, member.accountId, 1);
      const billed = Number(row!.cost_micros);
      expect(billed).toBeGreaterThan(0);

      await expect.poll(() => updates.every((list) => list.at(-1) === billed), { timeout: 15_000 }).toBe(true);
      // The turn's admission and settlement usually fold into one message; each message is one wake-up of
      // all 200, and each wake-up one read (a subscription still busy when a second arrives folds them).
      expect(wakeUps.count()).toBeGreaterThanOrEqual(1);
      expect(wakeUps.count()).toBeLessThanOrEqual(2);
      expect(reads.mock.calls.length).toBeGreaterThanOrEqual(1);
      expect(reads.mock.calls.length).toBeLessThanOrEqual(wakeUps.count());
    } finally {
      vi.restoreAllMocks();
      wakeUps.close();
      await close();
    }
  });

  it('never hands a wake-up a read begun before its change: that change gets a read of its own', async () => {
    const member: Member = await h.member();
    const watching = await watchMany(b, member.key, 2, 10);
    const wakeUps = await countWakeUps(b, member.accountId);
    let late: Awaited<ReturnType<typeof watchMany>> | undefined;
    let release = () => {};
    let reads: { mockRestore(): void } | undefined;
    try {
      await expect.poll(() => watching.updates.every((list) => list.length === 1), { timeout: 15_000 }).toBe(true);
      const usage = b.app.services.usage;
      const report = usage.report.bind(usage);
      const gate = new Promise<void>((resolve) => (release = resolve));
      let calls = 0;
      let heldHasRead = false;
      // The next read takes its figures at once and then stays in flight until the gate opens.
      reads = vi.spyOn(usage, 'report').mockImplementation(async (payer) => {
        const held = ++calls === 1;
        const figures = await report(payer);
        if (held) {
          heldHasRead = true;
          await gate;
        }
        return figures;
      });
      // A new subscriber's first read: it has read 0 used and is still in flight when the turn lands.
      late = await watchMany(b, member.key, 1, 1);
      await expect.poll(() => heldHasRead, { timeout: 10_000 }).toBe(true);

      const onA = new OpenAI({ apiKey: member.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
      await onA.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'while a read is in flight' }] });
      const [row] = await ledgerRows(h.database, member.accountId, 1);
      const billed = Number(row!.cost_micros);
      expect(billed).toBeGreaterThan(0);
      await expect.poll(() => wakeUps.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);

      // The 20 woken by the turn read afresh (they do not wait for, or get, the held read's 0).
      await expect.poll(() => watching.updates.every((list) => list.at(-1) === billed), { timeout: 15_000 }).toBe(true);
      expect(late.updates[0]).toEqual([]);

      // The held read then answers the late subscriber's first state, and its wake-up reads afresh.
      release();
      await expect.poll(() => late!.updates[0]!.at(-1), { timeout: 15_000 }).toBe(billed);
      expect(late.updates[0]![0]).toBe(0);
    } finally {
      release();
      reads?.mockRestore();
      wakeUps.close();
      await late?.close();
      await watching.close();
    }
  });
});

describe('usageUpdated shared execution', () => {
  const WITH_LIMIT = `subscription Pools($withLimit: Boolean!) { usageUpdated { pools { class window used { amountMicros } limit @include(if: $withLimit) { amountMicros } } } }`;

  /** One subscription on a socket of its own to `app`; collects every result. */
  function watchOne(app: TestApp, key: string, query: string, variables?: Record<string, unknown>): { results: { data?: UsageEvent; errors?: unknown[] }[]; client: Client } {
    const client = wsClient(app, { authorization: `Bearer ${key}` });
    const results: { data?: UsageEvent; errors?: unknown[] }[] = [];
    client.subscribe<UsageEvent>({ query, variables }, { next: (result) => results.push(result as { data?: UsageEvent }), error: (error) => results.push({ errors: [error] }), complete: () => undefined });
    return { results, client };
  }

  it('runs one execution per wake-up for the subscriptions that ask the same, and never hands one principal’s answer to another', async () => {
    const one: Member = await h.member();
    const two: Member = await h.member();
    // 20 subscriptions of one member asking the same thing, one asking with and one without the limits
    // (the same member, other variables), and 5 of another member asking the same thing as the 20.
    const same = await watchMany(b, one.key, 10, 2);
    const withLimit = watchOne(b, one.key, WITH_LIMIT, { withLimit: true });
    const withoutLimit = watchOne(b, one.key, WITH_LIMIT, { withLimit: false });
    const theirs = await watchMany(b, two.key, 5, 1);
    const wakeUps = await countWakeUps(b, one.accountId);
    const executions = vi.spyOn(b.app.services.usage, 'reportFor');
    try {
      await expect.poll(() => [...same.updates, ...theirs.updates].every((list) => list.length === 1) && withLimit.results.length === 1 && withoutLimit.results.length === 1, { timeout: 15_000 }).toBe(true);
      executions.mockClear();

      const onA = new OpenAI({ apiKey: one.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
      await onA.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'one turn of the first member' }] });
      const billed = Number((await ledgerRows(h.database, one.accountId, 1))[0]!.cost_micros);
      expect(billed).toBeGreaterThan(0);

      const last = (results: { data?: UsageEvent }[]) => results.at(-1)?.data?.usageUpdated.pools;
      await expect
        .poll(() => same.updates.every((list) => list.at(-1) === billed) && [withLimit, withoutLimit].every((w) => fastDay({ usageUpdated: { pools: last(w.results) ?? [] } } as UsageEvent)?.used.amountMicros === billed), { timeout: 15_000 })
        .toBe(true);
      // Each got the shape its own variables asked for.
      expect(last(withLimit.results)!.every((pool) => pool.limit !== undefined)).toBe(true);
      expect(last(withoutLimit.results)!.every((pool) => pool.limit === undefined)).toBe(true);
      // The other member's subscriptions, same document, were not woken and never showed the first member's usage.
      expect(theirs.updates.flat()).toEqual(Array(5).fill(0));

      // One execution (one resolver call) per wake-up for each of the three ways of asking, not one per subscription (22).
      const mine = executions.mock.calls.filter(([payer]) => payer.id === one.accountId).length;
      expect(wakeUps.count()).toBeGreaterThanOrEqual(1);
      expect(mine).toBeGreaterThanOrEqual(3);
      expect(mine).toBeLessThanOrEqual(3 * wakeUps.count());
      expect(executions.mock.calls.filter(([payer]) => payer.id !== one.accountId)).toEqual([]);

      // The other member's turn reaches theirs with their own usage, and leaves the first member's as it was.
      const onB = new OpenAI({ apiKey: two.key, baseURL: `${b.url}/v1`, maxRetries: 0 });
      await onB.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'a longer turn of the second member, so that it costs another amount' }] });
      const theirBill = Number((await ledgerRows(h.database, two.accountId, 1))[0]!.cost_micros);
      expect(theirBill).not.toBe(billed);
      await expect.poll(() => theirs.updates.every((list) => list.at(-1) === theirBill), { timeout: 15_000 }).toBe(true);
      expect(same.updates.flat().every((used) => used === 0 || used === billed)).toBe(true);
    } finally {
      executions.mockRestore();
      wakeUps.close();
      await Promise.all([same.close(), theirs.close(), withLimit.client.dispose(), withoutLimit.client.dispose()]);
    }
  });

  /** A bare graphql-transport-ws socket to `app`, signed in with `key`: every frame it receives, parsed, and whether any came as binary. */
  async function rawSocket(app: TestApp, key: string): Promise<{ frames: { id?: string; type: string; payload?: { data?: UsageEvent } }[]; binary: number; send(message: object): void; close(): void }> {
    const socket = new WebSocket(`${app.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const raw = { frames: [] as { id?: string; type: string; payload?: { data?: UsageEvent } }[], binary: 0, send: (message: object) => socket.send(JSON.stringify(message)), close: () => socket.terminate() };
    socket.on('message', (data, isBinary) => {
      if (isBinary) raw.binary++;
      raw.frames.push(JSON.parse(String(data)));
    });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    raw.send({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } });
    await expect.poll(() => raw.frames.some((frame) => frame.type === 'connection_ack')).toBe(true);
    return raw;
  }

  it('writes each subscription its frames under its own id from one shared stream, none after it completes, and none to another member’s socket', async () => {
    const one: Member = await h.member();
    const two: Member = await h.member();
    const mine = await rawSocket(b, one.key);
    const theirs = await rawSocket(b, two.key);
    // Ids a client may choose, one needing JSON escapes; the same id on another member's socket.
    const ids = ['1', 'say "hi"\\'];
    try {
      for (const id of ids) mine.send({ id, type: 'subscribe', payload: { query: USAGE_UPDATED } });
      theirs.send({ id: '1', type: 'subscribe', payload: { query: USAGE_UPDATED } });
      const nexts = (raw: { frames: { id?: string; type: string; payload?: { data?: UsageEvent } }[] }, id: string) =>
        raw.frames.filter((frame) => frame.type === 'next' && frame.id === id).map((frame) => fastDay(frame.payload!.data!).used.amountMicros);
      await expect.poll(() => [...ids.map((id) => nexts(mine, id).length), nexts(theirs, '1').length], { timeout: 15_000 }).toEqual([1, 1, 1]);
      // The member's two subscriptions ask the same: one stream, one watcher (each had its own before).
      expect(b.app.services.usage.events.watching(one.accountId)).toBe(1);

      const onA = new OpenAI({ apiKey: one.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
      await onA.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'first turn' }] });
      const first = Number((await ledgerRows(h.database, one.accountId, 1))[0]!.cost_micros);
      await expect.poll(() => ids.map((id) => nexts(mine, id).at(-1)), { timeout: 15_000 }).toEqual([first, first]);

      // The second completes; the next turn reaches the first only.
      mine.send({ id: ids[1], type: 'complete' });
      // The server reads a socket's messages in order: its pong says the complete was handled.
      mine.send({ type: 'ping' });
      await expect.poll(() => mine.frames.some((frame) => frame.type === 'pong')).toBe(true);
      expect(b.app.services.usage.events.watching(one.accountId)).toBe(1);
      const secondSeen = nexts(mine, ids[1]!).length;
      await onA.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'second turn, a little longer than the first' }] });
      const rows = await ledgerRows(h.database, one.accountId, 2);
      const both = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
      await expect.poll(() => nexts(mine, ids[0]!).at(-1), { timeout: 15_000 }).toBe(both);
      // A turn's updates may come as two (admission, settlement): give a late one time to arrive.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(nexts(mine, ids[1]!).length).toBe(secondSeen);
      // The client ended it: no `complete` back, and nothing but `next` frames under either id.
      expect(mine.frames.filter((frame) => frame.type !== 'connection_ack' && frame.type !== 'pong' && frame.type !== 'next')).toEqual([]);
      expect(mine.binary).toBe(0);

      // The other member's socket, same document and id, saw its own first state and nothing since.
      expect(nexts(theirs, '1')).toEqual([0]);
      expect(theirs.frames.filter((frame) => frame.type !== 'connection_ack' && frame.type !== 'next')).toEqual([]);
    } finally {
      mine.close();
      theirs.close();
    }
    await expect.poll(() => b.app.services.usage.events.watching(one.accountId)).toBe(0);
  });

  it('masks a shared execution’s error for each subscriber, with that subscriber’s own request id', async () => {
    const member: Member = await h.member();
    const watchers = [watchOne(b, member.key, USAGE_UPDATED), watchOne(b, member.key, USAGE_UPDATED)];
    const usage = b.app.services.usage;
    try {
      await expect.poll(() => watchers.every((w) => w.results.length === 1), { timeout: 15_000 }).toBe(true);
      // The two share one execution (the test above counts them); its error is masked and named per socket.
      vi.spyOn(usage, 'report').mockRejectedValue(new Error('secret detail of a failed read'));
      const onA = new OpenAI({ apiKey: member.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
      await onA.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'a turn whose usage read fails' }] });
      await expect.poll(() => watchers.every((w) => w.results.length >= 2), { timeout: 15_000 }).toBe(true);
      const errors = watchers.map((w) => (w.results[1]!.errors as { message: string; extensions: { code: string; requestId: string } }[])[0]!);
      for (const error of errors) {
        expect(error.extensions.code).toBe('internal_error');
        expect(error.message).not.toContain('secret detail');
      }
      expect(errors[0]!.extensions.requestId).toMatch(/^mbr_/);
      expect(errors[1]!.extensions.requestId).toMatch(/^mbr_/);
      expect(errors[0]!.extensions.requestId).not.toBe(errors[1]!.extensions.requestId);
    } finally {
      vi.restoreAllMocks();
      await Promise.all(watchers.map((w) => w.client.dispose()));
    }
  });
});

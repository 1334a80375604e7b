/**
 * A search's answer is counted for settlement in the token-counting worker, not on the event loop: the
 * worker starts with the first search (not with the app), the ledger bills what the main thread's count
 * says, and app close ends the worker (nothing left to hold the process). Real PostgreSQL and Redis; the
 * provider is the scripted SearXNG server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenWorker } from '../../../server/modules/gateway/token-count.ts';
import { TokenEstimate, tokenizer } from '../../../server/modules/gateway/token-estimate.ts';
import type { SvcSearchV1 } from '../../../server/modules/search/search.output.ts';
import { startScriptedSearxng, type ScriptedSearxng } from '../../fixtures/scripted-searxng.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { createMember, ledgerRows, relaxedLimits, type Member } from '../gateway/harness.ts';

let searxng: ScriptedSearxng;
let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp | undefined;

beforeAll(async () => {
  searxng = await startScriptedSearxng();
  mode = await realMode();
});

afterAll(async () => {
  await app?.close();
  await searxng?.close();
  await mode?.cleanup();
});

async function countTokens(text: string): Promise<number> {
  return new TokenEstimate(await tokenizer()).count(text);
}

const searchConfig = () => ({ ...relaxedLimits, search: { provider: 'searxng', searxng: { url: searxng.url, timeoutMs: 500 }, maxResults: 10, cacheSeconds: 0 } });

/** One REST `web_search` by a new member: its answer, and the member. */
async function search(target: TestApp, query: string): Promise<{ result: SvcSearchV1; member: Member }> {
  const member = await createMember(target);
  const response = await fetch(`${target.url}/v1/mcp/tools/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'web_search', arguments: { query } }),
  });
  expect(response.status).toBe(200);
  return { result: ((await response.json()) as { result: SvcSearchV1 }).result, member };
}

describe('token counting for search settlement', () => {
  it('starts the worker with the first search, bills its counts, and ends it on app close', async () => {
    app = await startApp(mode.config, { config: searchConfig() });
    expect(tokenWorker()).toBeNull();
    const query = 'counted off the event loop';
    const { result, member } = await search(app, query);
    const [row] = await ledgerRows(mode.database, member.accountId);
    expect(row).toMatchObject({ product: 'search', status: 'ok' });
    expect(row!.input_tokens).toBe(await countTokens(query));
    expect(row!.output_tokens).toBe(await countTokens(JSON.stringify(result)));

    const worker = tokenWorker();
    expect(worker).not.toBeNull();
    const exited = new Promise<number>((done) => worker!.once('exit', done));
    await app.close();
    app = undefined;
    await exited;
    expect(tokenWorker()).toBeNull();
    expect(process.getActiveResourcesInfo()).not.toContain('MessagePort');
  });

  it('a search settled while the app closes is billed: close waits for its count before settlement closes', async () => {
    app = await startApp(mode.config, { config: searchConfig() });
    const { result, member } = await search(app, 'settled while closing');
    // At once, while the answer's count may still be in the worker.
    await app.close();
    app = undefined;
    const [row] = await ledgerRows(mode.database, member.accountId);
    expect(row).toMatchObject({ product: 'search', status: 'ok' });
    expect(row!.output_tokens).toBe(await countTokens(JSON.stringify(result)));
  });
});

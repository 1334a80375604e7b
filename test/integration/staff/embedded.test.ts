/**
 * The staff console's reads on embedded PGlite (the default without DATABASE_URL): the stats migration ran,
 * `stats` groups a ledger row into its day (in a time zone east of UTC), `accounts` finds by email, and
 * the search box's prefix lookups (text_pattern_ops indexes, `order by … using ~<~`) answer there too.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertLedgerRows } from '../../../server/metering/ledger.ts';
import type { Principal } from '../../../server/authz/principal.ts';
import { embeddedMode, startApp, type TestApp } from '../../helpers/app.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { seed } from '../../helpers/seed.ts';

const mode = embeddedMode();
let app: TestApp;

beforeAll(async () => {
  app = await startApp(mode.config, { config: { timezone: 'Asia/Shanghai' } });
});

afterAll(async () => {
  await app?.close();
  await mode.cleanup();
});

it('stats and account search answer on PGlite', async () => {
  const support = await seed(app).staff('support');
  const member = await seed(app).member({ tag: 'embedded-buyer' });
  await insertLedgerRows(app.app.services.db, 'USD', [ledgerEntry(member.id, { model: 'svc-2.1', costMicros: 4321, inputTokens: 7, outputTokens: 9, status: 'refunded' })]);
  const actor: Principal = { accountId: support.id, email: support.email, role: 'support', payer: { kind: 'account', id: support.id, package: 'free' }, credential: { kind: 'web_session', id: support.id } };
  const stats = await app.app.services.stats.stats(actor, 'last_7_days');
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Shanghai' }).format(new Date());
  expect(stats.byDay.at(-1)).toMatchObject({ date: today, requests: 1, inputTokens: 7, outputTokens: 9, errors: 1, refunds: 1, spend: { amountMicros: 4321 } });
  expect(stats.byModel).toEqual([expect.objectContaining({ model: 'svc-2.1', requests: 1 })]);

  const found = await app.app.services.staff.searchAccounts(actor, { search: 'EMBEDDED-BUYER' });
  expect(found.nodes.map((account) => account.id)).toEqual([member.id]);

  const { key, keyId } = await member.withKey('pglite');
  const search = async (text: string) => (await app.app.services.staffSearch.search(actor, text)).hits.map((hit) => [hit.kind, hit.id]);
  expect(await search('Embedded-Buyer')).toEqual([['account', member.id]]);
  expect(await search('@example.co')).toContainEqual(['account', member.id]);
  expect(await search(key)).toEqual([['api_key', keyId]]);
  expect(await search(key.slice(0, 11))).toContainEqual(['api_key', keyId]);
});

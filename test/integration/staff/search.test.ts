/**
 * The staff search box (issue 49 item 6): one query, `staffSearch`, finds an account by the start of its
 * email or its domain, an organisation by the start of its name, a key whole or by its prefix (or
 * `prefix…last4` as lists print it), a request by svc's id or the client's own, and an order by its
 * number or the provider's trade number — each hit typed by kind with the account it belongs to. Members
 * are refused; staff with a bearer key are told to use a web session; the REST twin answers the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { bearerGraphQL } from '../../helpers/browser.ts';
import { applyFor, organisationKey } from '../../helpers/enterprise.ts';
import { seed, type Person } from '../../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let upstream: ScriptedUpstream;
let support: Person;
let member: Person;
let key: { key: string; keyId: string };
let organisation: { id: string; name: string };
let enterpriseKey: string;
let requestId: string;
let orderId: string;
const tag = `srch${Date.now().toString(36)}`;

interface Hit {
  kind: string;
  id: string;
  matched: string;
  account: { id: string; email: string } | null;
  organisationName: string | null;
  key: { name: string; last4: string; prefix: string; kind: string } | null;
  request: { requestId: string; model: string } | null;
  order: { id: string; state: string; amount: string; currency: string } | null;
}

const SEARCH = `query($q: String!) { staffSearch(query: $q) { query shape truncated hits {
  kind id matched organisationName
  account { id email }
  key { name prefix last4 kind }
  request { requestId model }
  order { id state amount currency }
} } }`;

async function search(q: string, as: Person = support): Promise<{ shape: string; truncated: boolean; hits: Hit[] }> {
  const result = await as.web.graphql<{ staffSearch: { shape: string; truncated: boolean; hits: Hit[] } }>(SEARCH, { q });
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data!.staffSearch;
}

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  setup = await realMode();
  app = await startApp(setup.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
  const people = seed(app);
  support = await people.staff('support');
  member = await people.member({ tag: `${tag}-buyer` });
  key = await member.withKey('billing-server');
  const application = await applyFor(member, { organisation: `Zebra ${tag} Logistics` });
  organisation = { id: application.organisationId!, name: `Zebra ${tag} Logistics` };
  enterpriseKey = await organisationKey(member, organisation.id);

  const reply = await fetch(`${app.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'x-svc-request-id': `mbr_client${tag}` },
    body: JSON.stringify({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello' }] }),
  });
  expect(reply.status).toBe(200);
  await settled(app);
  requestId = (await app.app.services.usage.history({ kind: 'account', id: member.id, package: 'free' }, { first: 1 })).nodes[0]!.requestId;

  const checkout = await member.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'sandbox', currency: 'USD' } });
  expect(checkout.status).toBe(201);
  orderId = ((await checkout.json()) as { order: { id: string } }).order.id;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await upstream?.close();
  await setup?.cleanup();
});

describe('staff search', () => {
  it('finds accounts by the start of the email (any case) or by @domain, and an account by its id', async () => {
    const byPrefix = await search(`${tag}-BUYER`);
    expect(byPrefix.shape).toBe('text');
    expect(byPrefix.hits.filter((hit) => hit.kind === 'account').map((hit) => [hit.id, hit.matched])).toEqual([[member.id, 'email']]);

    const withAt = await search(member.email.slice(0, member.email.indexOf('@') + 3));
    expect(withAt.shape).toBe('email');
    expect(withAt.hits.map((hit) => hit.id)).toEqual([member.id]);

    const domain = await search('@example.c');
    expect(domain.shape).toBe('domain');
    expect(domain.hits.every((hit) => hit.kind === 'account' && hit.account!.email.endsWith('@example.com'))).toBe(true);
    expect(domain.hits.length).toBeGreaterThan(0);

    const byId = await search(member.id.toUpperCase());
    expect(byId.shape).toBe('id');
    expect(byId.hits).toEqual([expect.objectContaining({ kind: 'account', id: member.id, matched: 'id', account: { id: member.id, email: member.email } })]);

    // The middle of an address is not a prefix of anything: no hit (and no scan of every account).
    expect((await search(`buyer-${tag}`)).hits).toEqual([]);
    // % and _ are plain text.
    expect((await search(`${tag}%`)).hits).toEqual([]);
  });

  it('finds an organisation by the start of its name, in any case, and by its id', async () => {
    const found = await search(`zebra ${tag.toUpperCase()} LOG`);
    expect(found.hits).toEqual([expect.objectContaining({ kind: 'organisation', id: organisation.id, matched: 'organisation_name', organisationName: organisation.name })]);
    const byId = await search(organisation.id);
    expect(byId.hits).toEqual([expect.objectContaining({ kind: 'organisation', id: organisation.id, matched: 'id', organisationName: organisation.name })]);
  });

  it('finds a key whole (by its hash), as prefix…last4, by its prefix, and by its id, with its owner', async () => {
    const whole = await search(key.key);
    expect(whole.shape).toBe('key');
    expect(whole.hits).toEqual([
      expect.objectContaining({ kind: 'api_key', id: key.keyId, matched: 'key', account: { id: member.id, email: member.email }, key: { name: 'billing-server', prefix: key.key.slice(0, 12), last4: key.key.slice(-4), kind: 'personal' } }),
    ]);
    const printed = await search(`${key.key.slice(0, 12)}…${key.key.slice(-4)}`);
    expect(printed.hits.map((hit) => hit.id)).toEqual([key.keyId]);
    const prefix = await search(key.key.slice(0, 12));
    expect(prefix.hits.map((hit) => hit.id)).toContain(key.keyId);
    expect(prefix.hits.every((hit) => hit.key!.prefix === key.key.slice(0, 12))).toBe(true);
    expect((await search(key.keyId)).hits).toEqual([expect.objectContaining({ kind: 'api_key', id: key.keyId, matched: 'id' })]);

    const organisationOwned = await search(enterpriseKey);
    expect(organisationOwned.hits).toEqual([expect.objectContaining({ kind: 'api_key', matched: 'key', organisationName: organisation.name, account: expect.objectContaining({ id: organisation.id }) })]);
    expect(organisationOwned.hits[0]!.key!.kind).toBe('enterprise');
    // A key nobody has: nothing, and the secret is never echoed back.
    const unknown = await search(`svc_live_${'x'.repeat(43)}`);
    expect(unknown.hits).toEqual([]);
  });

  it("finds a request by svc's id and by the id its client sent, with its payer", async () => {
    const own = await search(requestId);
    expect(own.shape).toBe('request');
    expect(own.hits).toEqual([expect.objectContaining({ kind: 'request', id: requestId, matched: 'request_id', account: { id: member.id, email: member.email }, request: { requestId, model: 'svc-2.1-fast' } })]);
    const clients = await search(`mbr_client${tag}`);
    expect(clients.hits).toEqual([expect.objectContaining({ kind: 'request', id: requestId, matched: 'client_request_id' })]);
    expect((await search('mbr_nobodysentthisone')).hits).toEqual([]);
  });

  it('finds an order by its number, with its payer', async () => {
    const found = await search(orderId);
    expect(found.shape).toBe('order');
    expect(found.hits).toEqual([expect.objectContaining({ kind: 'order', id: orderId, matched: 'order_id', account: { id: member.id, email: member.email }, order: { id: orderId, state: 'created', amount: '9.00', currency: 'USD' } })]);
  });

  it('says when more records start with the text than it shows', async () => {
    const found = await search('svc_live_');
    expect(found.hits.length).toBeLessThanOrEqual(10);
    // Every test key starts so; this database has at least the one above.
    expect(found.hits.every((hit) => hit.kind === 'api_key')).toBe(true);
  });

  it('answers the REST twin the same, refuses empty text, members and bearer keys', async () => {
    const rest = await support.web.fetch(`/api/membership/staff/search?query=${encodeURIComponent(orderId)}`);
    expect(rest.status).toBe(200);
    const body = (await rest.json()) as { ok: boolean; shape: string; hits: Hit[] };
    expect(body).toMatchObject({ ok: true, shape: 'order', hits: [{ kind: 'order', id: orderId }] });

    const empty = await support.web.graphql(SEARCH, { q: '   ' });
    expect(empty.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', param: 'query' });
    const emptyRest = await support.web.fetch('/api/membership/staff/search');
    expect(emptyRest.status).toBe(400);

    const refused = await member.web.graphql(SEARCH, { q: member.email });
    expect(refused.errors?.[0]?.extensions?.code).toBe('forbidden');
    expect(refused.data).toBeNull();
    expect((await member.web.fetch(`/api/membership/staff/search?query=${encodeURIComponent(member.email)}`)).status).toBe(403);

    const bearer = await bearerGraphQL(app.url, await support.key(), SEARCH, { q: member.email });
    expect(bearer.errors?.[0]?.extensions?.code).toBe('sign_in_required');
  });
});

/**
 * A request's story (issue 49 item 7): the ledger row of every request says which key made it, how long it
 * took, how it ended and — when it failed — the code and stage its client was told; an organisation key's
 * row keeps the address it connected from. Members read their own requests (`myRequest`, `GET
 * /api/membership/usage/requests/{id}`) and get nothing for anyone else's; staff read anyone's
 * (`request`), with the account that paid.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { applyFor, organisationKey } from '../../helpers/enterprise.ts';
import { seed, type Person, type SeededKey } from '../../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
/** The same database behind a proxy it trusts (127.0.0.1): X-Forwarded-For names the client. */
let proxied: TestApp;
let upstream: ScriptedUpstream;
let member: Person;
let stranger: Person;
let support: Person;
let laptop: SeededKey;

const RECORD = `requestId clientRequestId model routedModel status refunded errorCode errorStage upstreamStatus deployment
  durationSeconds latencyMs inputTokens outputTokens cost { amount currency } clientIp accountId payerId payerKind credentialKind
  key { id name prefix last4 kind revoked }`;

interface RequestRecord {
  requestId: string;
  clientRequestId: string | null;
  status: string;
  refunded: boolean;
  errorCode: string | null;
  errorStage: string | null;
  durationSeconds: number;
  latencyMs: number;
  clientIp: string | null;
  payerId: string;
  key: { id: string; name: string; prefix: string; last4: string; kind: string; revoked: boolean } | null;
}

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  setup = await realMode();
  const env = { SVC_UPSTREAM_URL: upstream.url };
  app = await startApp(setup.config, { env });
  proxied = await startApp(setup.config, { env, config: { server: { trustedProxies: ['127.0.0.1'] } } });
  const people = seed(app);
  member = await people.member({ tag: 'story' });
  stranger = await people.member({ tag: 'stranger' });
  support = await people.staff('support');
  laptop = await member.withKey('laptop');
}, 60_000);

afterAll(async () => {
  await proxied?.close();
  await app?.close();
  await upstream?.close();
  await setup?.cleanup();
});

/** One chat request; its reply's x-request-id and status, once its ledger row is written. */
async function chat(on: TestApp, token: string, content: string, options: { stream?: boolean; headers?: Record<string, string> } = {}): Promise<{ id: string; status: number; body: string }> {
  const reply = await fetch(`${on.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify({ model: 'svc-2.1-fast', stream: options.stream ?? false, messages: [{ role: 'user', content }] }),
  });
  const body = await reply.text();
  await settled(on);
  return { id: reply.headers.get('x-request-id')!, status: reply.status, body };
}

async function myRequest(person: Person, requestId: string): Promise<RequestRecord | null> {
  const result = await person.web.graphql<{ myRequest: RequestRecord | null }>(`query($id: String!) { myRequest(requestId: $id) { ${RECORD} } }`, { id: requestId });
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data!.myRequest;
}

describe("a request's story", () => {
  it('names the key (name, prefix, last 4) and the duration in seconds of a request that went well', async () => {
    const { id, status } = await chat(app, laptop.key, 'hello');
    expect(status).toBe(200);
    const record = await myRequest(member, id);
    expect(record).toMatchObject({
      requestId: id,
      status: 'ok',
      refunded: false,
      errorCode: null,
      errorStage: null,
      clientIp: null,
      payerId: member.id,
      key: { id: laptop.keyId, name: 'laptop', prefix: laptop.key.slice(0, 12), last4: laptop.key.slice(-4), kind: 'personal', revoked: false },
    });
    expect(record!.durationSeconds).toBeCloseTo(record!.latencyMs / 1000, 3);

    const history = await member.web.graphql<{ usageHistory: { nodes: RequestRecord[] } }>(`{ usageHistory(first: 5) { nodes { ${RECORD} } } }`);
    expect(history.data!.usageHistory.nodes.find((node) => node.requestId === id)).toMatchObject({ key: { name: 'laptop', last4: laptop.key.slice(-4) } });
  });

  it('keeps the code and stage the client was told when the model server failed before any output, and says it was refunded', async () => {
    const { id, status, body } = await chat(app, laptop.key, '#script {"status":503}');
    expect(status).toBe(503);
    const envelope = JSON.parse(body) as { code: string; stage: string; debug: { quotaRefunded: boolean } };
    expect(envelope.debug.quotaRefunded).toBe(true);
    expect(await myRequest(member, id)).toMatchObject({ status: 'refunded', refunded: true, errorCode: envelope.code, errorStage: envelope.stage });
    expect(envelope.stage).toBe('upstream');
  });

  it('keeps the mid-stream error of a stream cut short (stage stream), billed for what was delivered', async () => {
    const { id, body } = await chat(app, laptop.key, '#script {"failAfterChunks":3,"intervalMs":5}', { stream: true });
    expect(body).toContain('"error"');
    expect(await myRequest(member, id)).toMatchObject({ status: 'upstream_failed', refunded: false, errorCode: 'upstream_error', errorStage: 'stream' });
  });

  it("is found by the client's own x-svc-request-id too", async () => {
    const clientId = `mbr_mytrace${Date.now()}`;
    const { id } = await chat(app, laptop.key, 'traced', { headers: { 'x-svc-request-id': clientId } });
    expect(id).toBe(clientId);
    const record = await myRequest(member, clientId);
    expect(record).toMatchObject({ clientRequestId: clientId, status: 'ok' });
    expect(record!.requestId).not.toBe(clientId);
  });

  it("gives a member nothing for another's request (null, 404 over REST) and 400 for what is no request id", async () => {
    const { id } = await chat(app, laptop.key, 'private');
    expect(await myRequest(stranger, id)).toBeNull();
    const rest = await stranger.web.fetch(`/api/membership/usage/requests/${id}`);
    expect(rest.status).toBe(404);
    expect(await rest.json()).toMatchObject({ ok: false, code: 'not_found' });
    const mine = await member.web.fetch(`/api/membership/usage/requests/${id}`);
    expect(mine.status).toBe(200);
    expect(await mine.json()).toMatchObject({ ok: true, request: { requestId: id, key: { name: 'laptop' }, status: 'ok', refunded: false, durationSeconds: expect.any(Number) } });
    const malformed = await member.web.fetch('/api/membership/usage/requests/not-a-request');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 'invalid_request', error: { param: 'requestId' } });
  });

  it('keeps the address an organisation key connected from (as the trusted proxy named it), and staff read it with the organisation that paid', async () => {
    const application = await applyFor(member, { kind: 'commercial' });
    const token = await organisationKey(member, application.organisationId!);
    const { id, status } = await chat(proxied, token, 'from the office', { headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(status).toBe(200);
    // The organisation paid: it is not the member's own request.
    expect(await myRequest(member, id)).toBeNull();

    const read = await support.web.graphql<{ request: RequestRecord & { payer: { id: string; kind: string } } }>(`query($id: String!) { request(requestId: $id) { ${RECORD} payer { id kind } } }`, { id });
    expect(read.errors).toBeUndefined();
    expect(read.data!.request).toMatchObject({ clientIp: '203.0.113.7', payerId: application.organisationId, payer: { id: application.organisationId, kind: 'organisation' }, key: { kind: 'enterprise', name: 'backend' } });

    // A personal key's address is not kept, proxy or not.
    const personal = await chat(proxied, laptop.key, 'from home', { headers: { 'x-forwarded-for': '198.51.100.9' } });
    expect((await myRequest(member, personal.id))!.clientIp).toBeNull();

    const rest = await support.web.fetch(`/api/membership/staff/requests/${id}`);
    expect(await rest.json()).toMatchObject({ ok: true, request: { requestId: id, clientIp: '203.0.113.7' } });
    expect((await support.web.fetch('/api/membership/staff/requests/mbr_nosuchrequest1')).status).toBe(404);
  });

  it('refuses `request` to members: it is for staff', async () => {
    const { id } = await chat(app, laptop.key, 'mine');
    const refused = await member.web.graphql(`query($id: String!) { request(requestId: $id) { requestId } }`, { id });
    expect(refused.errors?.[0]?.extensions?.code).toBe('forbidden');
    expect((await member.web.fetch(`/api/membership/staff/requests/${id}`)).status).toBe(403);
  });
});

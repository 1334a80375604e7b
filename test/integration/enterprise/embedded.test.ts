/**
 * Enterprise on embedded PGlite with the in-process pub/sub (no DATABASE_URL, no Redis): an application is
 * approved by staff, the organisation's key works on /v1/chat/completions and bills the organisation,
 * and its connecting IP is counted in memory and written within a second, the subscriber told.
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { embeddedMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';

const mode = embeddedMode();
let upstream: ScriptedUpstream;
let app: TestApp;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  app = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
});

afterAll(async () => {
  await app?.close();
  await upstream?.close();
  await mode.cleanup();
});

it('apply, approve, mint, call, see the IP: on PGlite with in-process events', async () => {
  const member = await seed(app).member({ tag: 'embedded-org' });
  const support = await seed(app).staff('support');
  const submitted = await member.web.graphql<{ submitEnterpriseApplication: { id: string; state: string } }>(
    'mutation($input: EnterpriseApplicationInput!) { submitEnterpriseApplication(input: $input) { id state } }',
    { input: { kind: 'enterprise', organisation: 'Embedded Works', contactEmail: 'it@embedded.example', country: 'CN', useCase: 'Offline document summaries for our team.', expectedMonthlyTokens: 1000000 } },
  );
  expect(submitted.data?.submitEnterpriseApplication.state).toBe('pending_review');
  const approved = await support.web.graphql<{ approveEnterpriseApplication: { organisationId: string } }>('mutation($id: ID!) { approveEnterpriseApplication(id: $id) { organisationId } }', {
    id: submitted.data!.submitEnterpriseApplication.id,
  });
  const organisationId = approved.data!.approveEnterpriseApplication.organisationId;
  const minted = await member.web.graphql<{ createOrganisationKey: { token: string; key: { id: string } } }>(
    'mutation($org: ID!) { createOrganisationKey(organisationId: $org, name: "embedded", allowedCidrs: ["127.0.0.1/32"]) { token key { id } } }',
    { org: organisationId },
  );
  const { token } = minted.data!.createOrganisationKey;

  const seen: { ip: string; requestCount: number }[][] = [];
  const headers = { cookie: `svc_membership_session=${member.web.cookie}`, origin: app.url };
  const CookieSocket = class extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  };
  const client = createClient({ url: `${app.url.replace('http', 'ws')}/graphql`, webSocketImpl: CookieSocket, retryAttempts: 0 });
  try {
    client.subscribe<{ organisationConnectionsChanged: { ip: string; requestCount: number }[] }>(
      { query: 'subscription($id: ID!) { organisationConnectionsChanged(organisationId: $id) { ip requestCount } }', variables: { id: organisationId } },
      { next: (result) => void (result.data && seen.push(result.data.organisationConnectionsChanged)), error: () => undefined, complete: () => undefined },
    );
    await expect.poll(() => seen.length, { timeout: 5000 }).toBeGreaterThan(0);
    const reply = await fetch(`${app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(reply.status).toBe(200);
    await expect.poll(() => seen.at(-1), { timeout: 1000, interval: 20 }).toEqual([{ ip: '127.0.0.1', requestCount: 1 }]);
  } finally {
    await client.dispose();
  }
  await settled(app);
  const usage = await member.web.graphql<{ organisation: { usageHistory: { nodes: { credentialKind: string }[] } } }>('query($id: ID!) { organisation(id: $id) { usageHistory { nodes { credentialKind } } } }', {
    id: organisationId,
  });
  expect(usage.data?.organisation.usageHistory.nodes).toEqual([{ credentialKind: 'enterprise_key' }]);
});

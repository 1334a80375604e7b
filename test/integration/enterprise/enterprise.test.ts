/**
 * Enterprise organisations (issue 10), on two instances sharing PostgreSQL and Redis, in front of the
 * scripted upstream: applications (commercial approved on submit; enterprise approved or rejected by staff,
 * live on the other instance's staff subscription), staff-only operations refused to members, organisation
 * routes refused to non-members, svc_ent_ keys metering to the organisation, revocation on both instances,
 * IP allow-lists, connecting IPs (the socket peer, X-Forwarded-For only from a trusted proxy), and no
 * plaintext key in the database.
 */
import { createClient, type Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { realMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { testRedisUrl } from '../../helpers/env.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let upstream: ScriptedUpstream;
let a: TestApp;
let b: TestApp;
/** A third instance behind a "proxy": it trusts 127.0.0.1 to say who the client is. */
let proxied: TestApp;

const relaxed = { rateLimits: { ipPerMinute: 100_000, concurrentStreamsPerAccount: 1000 } };

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  setup = await realMode();
  const env = { SVC_UPSTREAM_URL: upstream.url };
  a = await startApp(setup.config, { config: relaxed, env });
  b = await startApp(setup.config, { config: relaxed, env });
  proxied = await startApp(setup.config, { config: { ...relaxed, server: { trustedProxies: ['127.0.0.1'] } }, env });
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close(), proxied?.close()]);
  await upstream?.close();
  await setup?.cleanup();
});

interface Application {
  id: string;
  state: string;
  autoApproved: boolean;
  organisationId: string | null;
  packageId: string | null;
  decisionNote: string | null;
  timeline: { action: string; actorKind: string; note: string | null }[];
}

const APPLICATION_FIELDS = 'id state autoApproved organisationId packageId decisionNote timeline { action actorKind note }';

function applicationInput(overrides: Record<string, unknown> = {}) {
  return {
    kind: 'enterprise',
    organisation: `Acme ${Math.random().toString(36).slice(2, 10)}`,
    contactEmail: 'ops@acme.example',
    website: 'https://acme.example',
    country: 'DE',
    useCase: 'Customer support drafts and internal search over our manuals.',
    expectedMonthlyTokens: 50_000_000,
    ...overrides,
  };
}

async function submit(person: Person, overrides: Record<string, unknown> = {}): Promise<Application> {
  const result = await person.web.graphql<{ submitEnterpriseApplication: Application }>(
    `mutation($input: EnterpriseApplicationInput!) { submitEnterpriseApplication(input: $input) { ${APPLICATION_FIELDS} } }`,
    { input: applicationInput(overrides) },
  );
  expect(result.errors).toBeUndefined();
  return result.data!.submitEnterpriseApplication;
}

/** A member who owns an approved (commercial) organisation. */
async function organisationOwner(app: TestApp = a): Promise<{ owner: Person; organisationId: string }> {
  const owner = await seed(app).member({ tag: 'owner' });
  const application = await submit(owner, { kind: 'commercial' });
  return { owner, organisationId: application.organisationId! };
}

async function mintKey(owner: Person, organisationId: string, allowedCidrs: string[] = []): Promise<{ token: string; id: string }> {
  const response = await owner.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/keys`, { body: { name: 'backend', allowedCidrs } });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { token: string; id: string; prefix: string; last4: string };
  expect(body.token.startsWith('svc_ent_')).toBe(true);
  expect(body.prefix).toBe(body.token.slice(0, 12));
  return { token: body.token, id: body.id };
}

const chat = (base: string, token: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'auto', messages: [{ role: 'user', content: 'hello' }] }),
  });

const models = (base: string, token: string, headers: Record<string, string> = {}) => fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${token}`, ...headers } });

describe('applications', () => {
  it('a commercial application is approved on submit and creates the organisation, owned by the applicant, on Free', async () => {
    const member = await seed(a).member({ tag: 'commercial' });
    const application = await submit(member, { kind: 'commercial' });
    expect(application).toMatchObject({ state: 'approved', autoApproved: true, packageId: 'free' });
    expect(application.timeline.map((entry) => `${entry.action}:${entry.actorKind}`)).toEqual(['submitted:applicant', 'approved:system']);
    const organisations = await member.web.graphql<{ organisations: { id: string; viewerRole: string; packageId: string; members: { email: string; role: string }[] }[] }>(
      '{ organisations { id viewerRole packageId members { email role } } }',
    );
    expect(organisations.data?.organisations).toEqual([{ id: application.organisationId, viewerRole: 'owner', packageId: 'free', members: [{ email: member.email, role: 'owner' }] }]);
    const plan = await member.web.graphql<{ organisations: { plan: { id: string; name: string } | null }[] }>('{ organisations { plan { id name } } }');
    expect(plan.data?.organisations).toEqual([{ plan: { id: 'free', name: 'Free' } }]);
    // The organisation is an account of kind organisation: its own payer.
    const { rows } = await setup.database.query('select kind, plan_package, password_hash from account where id = $1', [application.organisationId]);
    expect(rows[0]).toEqual({ kind: 'organisation', plan_package: 'free', password_hash: null });
    // The applicant is told, in their language.
    expect(a.app.services.mailer.lastTo(member.email)?.subject).toContain('approved');
  });

  it('bad fields are refused with every field named, never a 500', async () => {
    const member = await seed(a).member({ tag: 'invalid' });
    const response = await member.web.fetch('/api/membership/enterprise/applications', {
      body: { kind: 'enterprise', organisation: 'A', contactEmail: 'nope', country: 'XX', useCase: 'short', expectedMonthlyTokens: -5 },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; error: { param: string }; messageZh: string; fieldErrors: { param: string }[] };
    expect(body.code).toBe('invalid_request');
    expect(body.error.param).toBe('organisation');
    expect(body.fieldErrors.map((error) => error.param)).toEqual(['organisation', 'contactEmail', 'country', 'useCase', 'expectedMonthlyTokens']);
    expect(body.messageZh).toMatch(/\p{Script=Han}/u);
  });

  it('an enterprise application waits; one open application per account and per name; staff approve with a note and package on the other instance', async () => {
    const member = await seed(a).member({ tag: 'pending' });
    const support = await seed(b).staff('support');
    const application = await submit(member);
    expect(application).toMatchObject({ state: 'pending_review', autoApproved: false, organisationId: null });

    // A second open application from the same account, or for the same name from another account: 409.
    const again = await member.web.fetch('/api/membership/enterprise/applications', { body: applicationInput() });
    expect(again.status).toBe(409);
    const other = await seed(a).member({ tag: 'samename' });
    const sameName = await other.web.graphql(
      'mutation($input: EnterpriseApplicationInput!) { submitEnterpriseApplication(input: $input) { id } }',
      { input: applicationInput({ organisation: (await member.web.graphql<{ myEnterpriseApplications: { organisation: string }[] }>('{ myEnterpriseApplications { organisation } }')).data!.myEnterpriseApplications[0]!.organisation.toUpperCase() }) },
    );
    expect(sameName.errors?.[0]?.extensions).toMatchObject({ code: 'conflict', status: 409 });

    // The queue on B shows it, with the applicant's account for staff.
    const queue = await support.web.graphql<{ enterpriseApplications: { nodes: { id: string; applicant: { email: string; planPackage: string } }[] } }>(
      '{ enterpriseApplications(state: pending_review, first: 200) { nodes { id applicant { email planPackage } } } }',
    );
    expect(queue.errors).toBeUndefined();
    expect(queue.data?.enterpriseApplications.nodes.find((node) => node.id === application.id)?.applicant).toEqual({ email: member.email, planPackage: 'free' });

    const approved = await support.web.graphql<{ approveEnterpriseApplication: Application }>(
      `mutation($id: ID!) { approveEnterpriseApplication(id: $id, note: "Welcome aboard", packageId: "max_x5") { ${APPLICATION_FIELDS} } }`,
      { id: application.id },
    );
    expect(approved.errors).toBeUndefined();
    expect(approved.data?.approveEnterpriseApplication).toMatchObject({ state: 'approved', autoApproved: false, packageId: 'max_x5', decisionNote: 'Welcome aboard' });
    expect(approved.data?.approveEnterpriseApplication.timeline.map((entry) => entry.action)).toEqual(['submitted', 'approved']);
    const organisationId = approved.data!.approveEnterpriseApplication.organisationId!;
    const mine = await member.web.fetch('/api/membership/enterprise/organisations');
    expect(((await mine.json()) as { organisations: { id: string; packageId: string }[] }).organisations).toEqual([expect.objectContaining({ id: organisationId, packageId: 'max_x5' })]);
    expect(b.app.services.mailer.lastTo(member.email)?.text).toContain('Welcome aboard');

    // Deciding twice: 409. The decision is in the audit log.
    const twice = await support.web.graphql('mutation($id: ID!) { rejectEnterpriseApplication(id: $id, reason: "late") { id } }', { id: application.id });
    expect(twice.errors?.[0]?.extensions).toMatchObject({ code: 'conflict' });
    const { rows } = await setup.database.query(`select action, actor_id, reason from audit_log where target_type = 'application' and target_id = $1`, [application.id]);
    expect(rows).toEqual([{ action: 'application:approve', actor_id: support.id, reason: 'Welcome aboard' }]);
  });

  it('staff reject with a reason the applicant sees; a reason is required; the applicant may withdraw while pending', async () => {
    const member = await seed(a).member({ tag: 'rejected' });
    // This applicant reads Chinese: the decision mail is in Chinese.
    await setup.database.query(`update account set locale = 'zh-CN' where id = $1`, [member.id]);
    const admin = await seed(a).staff('admin');
    const application = await submit(member);
    const noReason = await admin.web.graphql('mutation($id: ID!) { rejectEnterpriseApplication(id: $id, reason: "  ") { id } }', { id: application.id });
    expect(noReason.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', param: 'reason' });
    const rejected = await admin.web.graphql<{ rejectEnterpriseApplication: Application }>(
      `mutation($id: ID!) { rejectEnterpriseApplication(id: $id, reason: "We could not verify the organisation.") { ${APPLICATION_FIELDS} } }`,
      { id: application.id },
    );
    expect(rejected.data?.rejectEnterpriseApplication).toMatchObject({ state: 'rejected', decisionNote: 'We could not verify the organisation.', organisationId: null });
    const seen = await member.web.graphql<{ enterpriseApplication: Application }>(`query($id: ID!) { enterpriseApplication(id: $id) { ${APPLICATION_FIELDS} } }`, { id: application.id });
    expect(seen.data?.enterpriseApplication.timeline.at(-1)).toEqual({ action: 'rejected', actorKind: 'staff', note: 'We could not verify the organisation.' });
    const mail = a.app.services.mailer.lastTo(member.email)!;
    expect(mail.text).toContain('We could not verify the organisation.');
    expect(mail.subject).toContain('未获批准');
    const { rows } = await setup.database.query(`select action from audit_log where target_id = $1`, [application.id]);
    expect(rows).toEqual([{ action: 'application:reject' }]);

    // A new application after the rejection; withdrawn while pending; withdrawing twice is a 409.
    const second = await submit(member);
    const withdrawn = await member.web.fetch(`/api/membership/enterprise/applications/${second.id}/withdraw`, { method: 'POST', body: {} });
    expect(withdrawn.status).toBe(200);
    expect(((await withdrawn.json()) as { application: { state: string } }).application.state).toBe('withdrawn');
    expect((await member.web.fetch(`/api/membership/enterprise/applications/${second.id}/withdraw`, { method: 'POST', body: {} })).status).toBe(409);
    const list = (await (await member.web.fetch('/api/membership/enterprise/applications')).json()) as { applications: { id: string; state: string }[] };
    expect(list.applications.map((app) => app.state)).toEqual(['withdrawn', 'rejected']);
  });

  it('the staff subscription on the other instance receives a new application within a second; an applicant hears only their own', async () => {
    const support = await seed(b).staff('support');
    const member = await seed(a).member({ tag: 'live' });
    const bystander = await seed(b).member({ tag: 'bystander' });
    const seenByStaff: { id: string; state: string }[] = [];
    const seenByBystander: { id: string }[] = [];
    const staffClient = cookieClient(b, support);
    const bystanderClient = cookieClient(b, bystander);
    const redis = new Redis(testRedisUrl);
    try {
      const query = 'subscription { enterpriseApplicationChanged { id state } }';
      staffClient.subscribe<{ enterpriseApplicationChanged: { id: string; state: string } }>({ query }, sink((data) => seenByStaff.push(data.enterpriseApplicationChanged)));
      bystanderClient.subscribe<{ enterpriseApplicationChanged: { id: string } }>({ query }, sink((data) => seenByBystander.push(data.enterpriseApplicationChanged)));
      // B is listening on Redis for the topic (both subscriptions share one SUBSCRIBE).
      const topic = `${b.config.redis.keyPrefix}enterprise-application-changed`;
      await expect.poll(async () => ((await redis.pubsub('NUMSUB', topic)) as [string, number])[1], { timeout: 5000 }).toBeGreaterThan(0);

      const application = await submit(member);
      await expect.poll(() => seenByStaff.find((event) => event.id === application.id), { timeout: 1000, interval: 20 }).toEqual({ id: application.id, state: 'pending_review' });
      // Withdrawn on A: staff on B hear that too.
      await member.web.fetch(`/api/membership/enterprise/applications/${application.id}/withdraw`, { method: 'POST', body: {} });
      await expect.poll(() => seenByStaff.filter((event) => event.id === application.id).map((event) => event.state), { timeout: 1000, interval: 20 }).toEqual(['pending_review', 'withdrawn']);

      // The bystander's own application reaches them; the others never did.
      const own = await submit(bystander);
      await expect.poll(() => seenByBystander.map((event) => event.id), { timeout: 1000, interval: 20 }).toEqual([own.id]);
    } finally {
      redis.disconnect();
      await Promise.all([staffClient.dispose(), bystanderClient.dispose()]);
    }
  });
});

describe('who may', () => {
  it('a member gets forbidden for every staff query and mutation', async () => {
    const member = await seed(a).member({ tag: 'nosy' });
    const applicant = await seed(a).member({ tag: 'applicant' });
    const application = await submit(applicant);
    const own = await submit(member, { kind: 'commercial' });
    const operations: [string, string, Record<string, unknown>][] = [
      ['enterpriseApplications', '{ enterpriseApplications { nodes { id } } }', {}],
      ['enterpriseApplication (someone else)', 'query($id: ID!) { enterpriseApplication(id: $id) { id } }', { id: application.id }],
      ['enterpriseApplication.applicant', 'query($id: ID!) { enterpriseApplication(id: $id) { applicant { id } } }', { id: own.id }],
      ['enterpriseApplication.otherApplications', 'query($id: ID!) { enterpriseApplication(id: $id) { otherApplications { id } } }', { id: own.id }],
      ['approveEnterpriseApplication', 'mutation($id: ID!) { approveEnterpriseApplication(id: $id) { id } }', { id: application.id }],
      ['rejectEnterpriseApplication', 'mutation($id: ID!) { rejectEnterpriseApplication(id: $id, reason: "no") { id } }', { id: application.id }],
      ['account.organisations', 'query($id: ID!) { account(id: $id) { organisations { id } } }', { id: applicant.id }],
      ['me.organisations', '{ me { organisations { id } } }', {}],
    ];
    for (const [name, query, variables] of operations) {
      const result = await member.web.graphql(query, variables);
      expect(result.errors?.[0]?.extensions?.code, name).toBe('forbidden');
    }
    // Still pending: nothing was done.
    const { rows } = await setup.database.query('select state from enterprise_application where id = $1', [application.id]);
    expect(rows[0].state).toBe('pending_review');
  });

  it("another member gets 404 on someone else's organisation routes; a plain member may read but not mint", async () => {
    const { owner, organisationId } = await organisationOwner();
    const { id: keyId } = await mintKey(owner, organisationId);
    const stranger = await seed(a).member({ tag: 'stranger' });
    const base = `/api/membership/enterprise/organisations/${organisationId}`;
    const routes: [string, string, unknown?][] = [
      ['GET', base],
      ['GET', `${base}/keys`],
      ['POST', `${base}/keys`, { name: 'mine now' }],
      ['DELETE', `${base}/keys/${keyId}`],
      ['GET', `${base}/connections`],
      ['GET', `${base}/usage`],
    ];
    for (const [method, path, body] of routes) {
      const response = await stranger.web.fetch(path, { method, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe('not_found');
    }
    const graph = await stranger.web.graphql<{ organisation: unknown }>('query($id: ID!) { organisation(id: $id) { id } }', { id: organisationId });
    expect(graph.data?.organisation).toBeNull();
    const revoke = await stranger.web.graphql('mutation($id: ID!) { revokeOrganisationKey(id: $id) { id } }', { id: keyId });
    expect(revoke.errors?.[0]?.extensions?.code).toBe('not_found');

    // Invited as a plain member (their address verified, so at once): reads, but minting is 403.
    await setup.database.query('update account set email_verified_at = now() where id = $1', [stranger.id]);
    const invite = await owner.web.graphql<{ inviteOrganisationMember: { member: { email: string; role: string } } }>(
      'mutation($org: ID!, $email: String!) { inviteOrganisationMember(organisationId: $org, email: $email) { member { email role } } }',
      { org: organisationId, email: stranger.email },
    );
    expect(invite.data?.inviteOrganisationMember.member).toEqual({ email: stranger.email, role: 'member' });
    expect((await stranger.web.fetch(`${base}/keys`)).status).toBe(200);
    expect((await stranger.web.fetch(`${base}/keys`, { body: { name: 'nope' } })).status).toBe(403);
    const manage = await stranger.web.graphql('mutation($org: ID!, $id: ID!) { setOrganisationMemberRole(organisationId: $org, accountId: $id, role: admin) { role } }', {
      org: organisationId,
      id: stranger.id,
    });
    expect(manage.errors?.[0]?.extensions?.code).toBe('forbidden');
    // Made admin by the owner: now they mint.
    await owner.web.graphql('mutation($org: ID!, $id: ID!) { setOrganisationMemberRole(organisationId: $org, accountId: $id, role: admin) { role } }', { org: organisationId, id: stranger.id });
    expect((await stranger.web.fetch(`${base}/keys`, { body: { name: 'admin key' } })).status).toBe(201);
    // Removed: 404 again.
    const removed = await owner.web.graphql<{ removeOrganisationMember: boolean }>('mutation($org: ID!, $id: ID!) { removeOrganisationMember(organisationId: $org, accountId: $id) }', {
      org: organisationId,
      id: stranger.id,
    });
    expect(removed.data?.removeOrganisationMember).toBe(true);
    expect((await stranger.web.fetch(`${base}/keys`)).status).toBe(404);
  });
});

describe('organisation keys', () => {
  it('an svc_ent_ key works on /v1/chat/completions and /v1/models and meters to the organisation, not the member', async () => {
    const { owner, organisationId } = await organisationOwner();
    const { token, id: keyId } = await mintKey(owner, organisationId);
    expect((await models(b.url, token)).status).toBe(200);
    const reply = await chat(b.url, token);
    expect(reply.status).toBe(200);
    await settled(a, b);
    const { rows } = await setup.database.query('select payer_kind, payer_id, credential_kind, credential_id, channel, cost_micros from usage_ledger where credential_id = $1', [keyId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ payer_kind: 'organisation', payer_id: organisationId, credential_kind: 'enterprise_key', channel: 'enterprise' });
    expect(Number(rows[0].cost_micros)).toBeGreaterThan(0);
    expect((await setup.database.query('select count(*)::int as n from usage_ledger where payer_id = $1', [owner.id])).rows[0].n).toBe(0);

    // The organisation's pools moved (REST and GraphQL agree); the member's did not.
    const usage = (await (await owner.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/usage`)).json()) as { packageId: string; pools: { class: string; window: string; used: { amountMicros: number } }[] };
    expect(usage.packageId).toBe('free');
    expect(usage.pools.some((pool) => pool.used.amountMicros > 0)).toBe(true);
    const own = (await (await owner.web.fetch('/api/membership/usage')).json()) as { pools: { used: { amountMicros: number } }[] };
    expect(own.pools.every((pool) => pool.used.amountMicros === 0)).toBe(true);
    const graph = await owner.web.graphql<{ organisation: { usageHistory: { nodes: { credentialKind: string }[] }; keys: { id: string; lastUsedAt: string | null }[] } }>(
      'query($id: ID!) { organisation(id: $id) { usageHistory { nodes { credentialKind } } keys { id lastUsedAt } } }',
      { id: organisationId },
    );
    expect(graph.data?.organisation.usageHistory.nodes).toEqual([{ credentialKind: 'enterprise_key' }]);
  });

  it("the organisation's usage is live on the other instance while its key is used", async () => {
    const { owner, organisationId } = await organisationOwner();
    const { token } = await mintKey(owner, organisationId);
    const seen: number[] = [];
    const client = cookieClient(b, owner);
    try {
      client.subscribe<{ organisationUsageUpdated: { pools: { used: { amountMicros: number } }[] } }>(
        { query: 'subscription($id: ID!) { organisationUsageUpdated(organisationId: $id) { pools { used { amountMicros } } } }', variables: { id: organisationId } },
        sink((data) => seen.push(data.organisationUsageUpdated.pools.reduce((sum, pool) => sum + pool.used.amountMicros, 0))),
      );
      await expect.poll(() => seen.length, { timeout: 5000 }).toBeGreaterThan(0);
      expect(seen[0]).toBe(0);
      expect((await chat(a.url, token)).status).toBe(200);
      await expect.poll(() => seen.at(-1), { timeout: 3000, interval: 20 }).toBeGreaterThan(0);
    } finally {
      await client.dispose();
    }
    // A stranger cannot watch it.
    const stranger = await seed(b).member({ tag: 'watcher' });
    const strangerClient = cookieClient(b, stranger);
    try {
      const outcome = await new Promise<unknown>((resolve) => {
        strangerClient.subscribe({ query: 'subscription($id: ID!) { organisationUsageUpdated(organisationId: $id) { packageId } }', variables: { id: organisationId } }, {
          next: (result) => resolve(result.errors?.[0]?.extensions?.code ?? 'data'),
          error: (error) => resolve((error as { extensions?: { code?: string } }[])[0]?.extensions?.code ?? 'error'),
          complete: () => resolve('complete'),
        });
      });
      expect(outcome).toBe('not_found');
    } finally {
      await strangerClient.dispose();
    }
  });

  it('a revoked key is refused at once on both instances', async () => {
    const { owner, organisationId } = await organisationOwner();
    const { token, id } = await mintKey(owner, organisationId);
    // Both instances have it cached.
    expect((await models(a.url, token)).status).toBe(200);
    expect((await models(b.url, token)).status).toBe(200);
    const revoked = await owner.web.at(b.url).fetch(`/api/membership/enterprise/organisations/${organisationId}/keys/${id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    for (const app of [a, b]) {
      await expect.poll(async () => (await models(app.url, token)).status, { timeout: 2000, interval: 20 }).toBe(401);
      expect((await chat(app.url, token)).status).toBe(401);
    }
    const keys = (await (await owner.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/keys`)).json()) as { keys: unknown[] };
    expect(keys.keys).toEqual([]);
  });

  it("staff revoke an organisation's key with a reason (audited); without one they are refused", async () => {
    const { owner, organisationId } = await organisationOwner();
    const { token, id } = await mintKey(owner, organisationId);
    const support = await seed(b).staff('support');
    const seen = await support.web.graphql<{ organisation: { keys: { id: string }[] } }>('query($id: ID!) { organisation(id: $id) { keys { id } } }', { id: organisationId });
    expect(seen.data?.organisation.keys).toEqual([{ id }]);
    const bare = await support.web.graphql('mutation($id: ID!) { revokeOrganisationKey(id: $id) { id } }', { id });
    expect(bare.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', param: 'reason' });
    const revoked = await support.web.graphql<{ revokeOrganisationKey: { id: string } }>('mutation($id: ID!) { revokeOrganisationKey(id: $id, reason: "leaked in a public repository") { id } }', { id });
    expect(revoked.errors).toBeUndefined();
    await expect.poll(async () => (await models(a.url, token)).status, { timeout: 2000, interval: 20 }).toBe(401);
    const { rows } = await setup.database.query(`select action, actor_id, reason from audit_log where target_type = 'api_key' and target_id = $1`, [id]);
    expect(rows).toEqual([{ action: 'api-key:revoke-any', actor_id: support.id, reason: 'leaked in a public repository' }]);
  });

  it('a key with an IP allow-list is refused from outside it (403 ip_not_allowed) and accepted inside; bad CIDRs are refused', async () => {
    const { owner, organisationId } = await organisationOwner();
    const bad = await owner.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/keys`, { body: { name: 'bad', allowedCidrs: ['10.0.0.0/33'] } });
    expect(bad.status).toBe(400);
    expect((await bad.json()) as { code: string }).toMatchObject({ code: 'invalid_request', error: { param: 'allowedCidrs' } });

    const outside = await mintKey(owner, organisationId, ['203.0.113.0/24']);
    const refused = await chat(a.url, outside.token);
    expect(refused.status).toBe(403);
    const envelope = (await refused.json()) as { code: string; stage: string; message: string; messageZh: string };
    expect(envelope).toMatchObject({ code: 'ip_not_allowed', stage: 'auth' });
    expect(envelope.message).toContain('127.0.0.1');
    expect((await models(b.url, outside.token)).status).toBe(403);
    // A spoofed X-Forwarded-For from an untrusted peer does not get it in.
    expect((await chat(a.url, outside.token, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(403);
    // Refused calls are neither "use" nor a connection.
    await Promise.all([a, b].map((app) => app.app.services.lastUsed.flush()));
    await Promise.all([a, b].map((app) => app.app.services.connectingIps.flush()));
    const untouched = await setup.database.query('select k.last_used_at, (select count(*)::int from organisation_connection c where c.key_id = k.id) as connections from api_key k where id = $1', [outside.id]);
    expect(untouched.rows[0]).toEqual({ last_used_at: null, connections: 0 });
    // Through a trusted proxy, the forwarded address counts.
    expect((await models(proxied.url, outside.token, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(200);

    const inside = await mintKey(owner, organisationId, ['127.0.0.0/8', '::1']);
    expect((await chat(a.url, inside.token)).status).toBe(200);
    const listed = (await (await owner.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/keys`)).json()) as { keys: { id: string; allowedCidrs: string[] }[] };
    expect(listed.keys.find((key) => key.id === inside.id)?.allowedCidrs).toEqual(['127.0.0.0/8', '::1/128']);
  });

  it('the connecting IP shows up within a second, live on the other instance; a spoofed X-Forwarded-For from an untrusted peer changes nothing', async () => {
    const { owner, organisationId } = await organisationOwner();
    const { token, id: keyId } = await mintKey(owner, organisationId);
    const live: { ip: string; requestCount: number }[][] = [];
    const client = cookieClient(b, owner);
    try {
      client.subscribe<{ organisationConnectionsChanged: { ip: string; requestCount: number }[] }>(
        { query: 'subscription($id: ID!) { organisationConnectionsChanged(organisationId: $id) { ip requestCount } }', variables: { id: organisationId } },
        sink((data) => live.push(data.organisationConnectionsChanged)),
      );
      // The subscription starts with the current (empty) list.
      await expect.poll(() => live.length, { timeout: 5000 }).toBeGreaterThan(0);
      expect(live[0]).toEqual([]);

      expect((await models(a.url, token, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(200);
      const connections = async () =>
        ((await (await owner.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/connections`)).json()) as { connections: { keyId: string; ip: string; requestCount: number; firstSeenAt: string; lastSeenAt: string }[] })
          .connections;
      await expect.poll(connections, { timeout: 1000, interval: 20 }).toEqual([expect.objectContaining({ keyId, ip: '127.0.0.1', requestCount: 1 })]);
      // Pushed to the subscriber on B after A's flush.
      await expect.poll(() => live.at(-1), { timeout: 2000, interval: 20 }).toEqual([{ ip: '127.0.0.1', requestCount: 1 }]);

      // More calls from both instances add up; through the trusted proxy the forwarded address is recorded.
      expect((await chat(b.url, token, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(200);
      expect((await models(proxied.url, token, { 'x-forwarded-for': '192.0.2.44' })).status).toBe(200);
      await expect
        .poll(async () => (await connections()).map((row) => `${row.ip}=${row.requestCount}`).sort(), { timeout: 1000, interval: 20 })
        .toEqual(['127.0.0.1=2', '192.0.2.44=1']);
      const rows = await connections();
      expect(rows.some((row) => row.ip === '198.51.100.7')).toBe(false);
      const local = rows.find((row) => row.ip === '127.0.0.1')!;
      expect(Date.parse(local.lastSeenAt)).toBeGreaterThanOrEqual(Date.parse(local.firstSeenAt));
    } finally {
      await client.dispose();
    }
  });

  it("an instance that stops leaves no count behind: its shutdown flush, or another instance's, writes them", async () => {
    const extra = await startApp(setup.config, { config: relaxed, env: { SVC_UPSTREAM_URL: upstream.url } });
    const { owner, organisationId } = await organisationOwner(extra);
    const { token, id } = await mintKey(owner, organisationId);
    await Promise.all([1, 2, 3].map(() => models(extra.url, token)));
    await extra.close();
    const rows = async () => (await setup.database.query('select ip, request_count::int as n from organisation_connection where key_id = $1', [id])).rows;
    await expect.poll(rows, { timeout: 1000, interval: 20 }).toEqual([{ ip: '127.0.0.1', n: 3 }]);
  });

  it('counts left in Redis by an instance that died before flushing are written by the others', async () => {
    const { owner, organisationId } = await organisationOwner();
    const { id } = await mintKey(owner, organisationId);
    // What a crashed instance leaves: counts in Redis that it never took (written here as record() does).
    const redis = new Redis(testRedisUrl, { keyPrefix: a.config.redis.keyPrefix });
    try {
      const fieldName = `${id}|${organisationId}|203.0.113.77`;
      const at = Date.now();
      await redis.multi().hincrby('enterprise:connections:count', fieldName, 4).hset('enterprise:connections:first', fieldName, at - 1000).hset('enterprise:connections:last', fieldName, at).exec();
    } finally {
      redis.disconnect();
    }
    const rows = async () => (await setup.database.query('select ip, request_count::int as n from organisation_connection where key_id = $1', [id])).rows;
    await expect.poll(rows, { timeout: 1000, interval: 20 }).toEqual([{ ip: '203.0.113.77', n: 4 }]);
  });

  it('the database holds no plaintext svc_ent_ key', async () => {
    const { owner, organisationId } = await organisationOwner();
    const { token } = await mintKey(owner, organisationId);
    expect((await models(a.url, token)).status).toBe(200);
    await a.app.services.connectingIps.flush();
    const secret = token.slice('svc_ent_'.length);
    const tables = ['api_key', 'account', 'organisation', 'organisation_member', 'organisation_invitation', 'enterprise_application', 'enterprise_application_event', 'organisation_connection', 'audit_log', 'usage_ledger'];
    for (const table of tables) {
      const { rows } = await setup.database.query(`select t::text as row from ${table} t`);
      expect(rows.length, table).toBeGreaterThanOrEqual(0);
      for (const row of rows as { row: string }[]) {
        expect(row.row.includes(secret), table).toBe(false);
        expect(row.row.includes(token), table).toBe(false);
      }
    }
    // What is stored is the SHA-256 of the token.
    const { rows } = await setup.database.query(`select count(*)::int as n from api_key where kind = 'enterprise' and token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [token]);
    expect(rows[0].n).toBe(1);
  });
});

describe('members', () => {
  it('an owner cannot send invitations without end: 50 an hour per organisation, then 429', async () => {
    const { owner, organisationId } = await organisationOwner();
    const invite = (n: number) =>
      owner.web.graphql('mutation($org: ID!, $email: String!) { inviteOrganisationMember(organisationId: $org, email: $email) { invitation { id } } }', {
        org: organisationId,
        email: `flood-${n}-${organisationId.slice(0, 8)}@example.com`,
      });
    for (let n = 0; n < 50; n++) expect((await invite(n)).errors, `invitation ${n}`).toBeUndefined();
    const refused = await invite(50);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'rate_limited', status: 429 });
  });

  it('an existing account whose address is not verified gets an invitation, taken up once it verifies', async () => {
    const { owner, organisationId } = await organisationOwner();
    const unverified = await seed(a).member({ tag: 'unverified' });
    const invited = await owner.web.graphql<{ inviteOrganisationMember: { member: unknown; invitation: { email: string } | null } }>(
      'mutation($org: ID!, $email: String!) { inviteOrganisationMember(organisationId: $org, email: $email) { member { email } invitation { email } } }',
      { org: organisationId, email: unverified.email.toUpperCase() },
    );
    expect(invited.data?.inviteOrganisationMember).toEqual({ member: null, invitation: { email: unverified.email } });
    expect((await unverified.web.graphql<{ organisations: unknown[] }>('{ organisations { id } }')).data?.organisations).toEqual([]);
    expect((await unverified.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/keys`)).status).toBe(404);
    await setup.database.query('update account set email_verified_at = now() where id = $1', [unverified.id]);
    // Verified: the first organisation request takes the invitation up.
    expect((await unverified.web.fetch(`/api/membership/enterprise/organisations/${organisationId}/keys`)).status).toBe(200);
    expect((await unverified.web.graphql<{ organisations: { id: string; viewerRole: string }[] }>('{ organisations { id viewerRole } }')).data?.organisations).toEqual([
      { id: organisationId, viewerRole: 'member' },
    ]);
    const again = await owner.web.graphql('mutation($org: ID!, $email: String!) { inviteOrganisationMember(organisationId: $org, email: $email) { member { email } } }', {
      org: organisationId,
      email: unverified.email,
    });
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'conflict', param: 'email' });
  });

  it('an invitation to an email without an account is taken up when that email signs up (verified)', async () => {
    const { owner, organisationId } = await organisationOwner();
    const email = `invitee-${Math.random().toString(36).slice(2, 10)}@example.com`;
    const invited = await owner.web.graphql<{ inviteOrganisationMember: { member: unknown; invitation: { email: string; role: string } } }>(
      'mutation($org: ID!, $email: String!) { inviteOrganisationMember(organisationId: $org, email: $email, role: admin) { member { email } invitation { email role } } }',
      { org: organisationId, email },
    );
    expect(invited.data?.inviteOrganisationMember).toEqual({ member: null, invitation: { email, role: 'admin' } });
    // No account, no language of its own: the mail is in the inviter's (English here).
    expect(a.app.services.mailer.lastTo(email)?.subject).toMatch(/^svc: you are invited to /);
    const { account } = await a.app.services.accounts.createUser({ email, password: 'correct horse battery staple', role: 'member' });
    await setup.database.query('update account set email_verified_at = now() where id = $1', [account.id]);
    const { token } = await a.app.services.sessions.startWebSession(account.id, { ip: '127.0.0.1', userAgent: 'test' });
    const { Browser } = await import('../../helpers/browser.ts');
    const browser = new Browser(a.url, a.url, token);
    const organisations = await browser.graphql<{ organisations: { id: string; viewerRole: string }[] }>('{ organisations { id viewerRole } }');
    expect(organisations.data?.organisations).toEqual([{ id: organisationId, viewerRole: 'admin' }]);
  });

  it("an invitation to an email without an account is mailed in the inviter's language", async () => {
    const { owner, organisationId } = await organisationOwner();
    await setup.database.query("update account set locale = 'zh-CN' where id = $1", [owner.id]);
    const email = `invitee-zh-${Math.random().toString(36).slice(2, 10)}@example.com`;
    const invited = await owner.web.graphql('mutation($org: ID!, $email: String!) { inviteOrganisationMember(organisationId: $org, email: $email) { invitation { email } } }', {
      org: organisationId,
      email,
    });
    expect(invited.errors).toBeUndefined();
    const mail = a.app.services.mailer.lastTo(email);
    expect(mail?.subject).toMatch(/^svc：您受邀加入 /);
    expect(mail?.text).toContain('/enterprise/console');
  });
});

describe('staff', () => {
  it("the dashboard's review queue counts pending applications with the oldest; staff see an account's organisations", async () => {
    const support = await seed(a).staff('support');
    const member = await seed(a).member({ tag: 'queue' });
    const application = await submit(member);
    const stats = await support.web.graphql<{ stats: { reviewQueue: { pending: number; oldestApplicationId: string | null } } }>('{ stats(range: last_7_days) { reviewQueue { pending oldestApplicationId } } }');
    expect(stats.errors).toBeUndefined();
    const { rows } = await setup.database.query(`select id from enterprise_application where state = 'pending_review' order by created_at, id`);
    expect(stats.data?.stats.reviewQueue).toEqual({ pending: rows.length, oldestApplicationId: rows[0].id });
    expect(rows.map((row: { id: string }) => row.id)).toContain(application.id);

    const { owner, organisationId } = await organisationOwner();
    const account = await support.web.graphql<{ account: { organisations: { id: string; viewerRole: string | null }[] } }>('query($id: ID!) { account(id: $id) { organisations { id viewerRole } } }', { id: owner.id });
    expect(account.data?.account.organisations).toEqual([{ id: organisationId, viewerRole: 'owner' }]);
    // The enterprise package is assignable by staff but not on the public catalogue.
    const catalogue = await support.web.graphql<{ plans: { packages: { id: string }[] }[]; assignablePlans: { packages: { id: string }[] }[] }>('{ plans { packages { id } } assignablePlans { packages { id } } }');
    expect(catalogue.data?.plans.flatMap((plan) => plan.packages.map((pkg) => pkg.id))).not.toContain('enterprise');
    expect(catalogue.data?.assignablePlans.flatMap((plan) => plan.packages.map((pkg) => pkg.id))).toContain('enterprise');
    // The organisation is an account staff can look up and re-package like any other (it is not theirs).
    const repackaged = await support.web.graphql('mutation($id: ID!) { setAccountPackage(accountId: $id, packageId: "enterprise", reason: "Signed contract") { id } }', { id: organisationId });
    expect(repackaged.errors).toBeUndefined();
    const organisation = await support.web.graphql<{ account: { kind: string; planPackage: string; usage: { packageId: string } } }>('query($id: ID!) { account(id: $id) { kind planPackage usage { packageId } } }', {
      id: organisationId,
    });
    expect(organisation.data?.account).toEqual({ kind: 'organisation', planPackage: 'enterprise', usage: { packageId: 'enterprise' } });
    // The public catalogue leaves enterprise out; the organisation carries its own plan for the package's name.
    const plan = await owner.web.graphql<{ plans: { id: string }[]; organisation: { plan: { id: string; name: string; packages: { id: string; name: string }[] } | null } }>(
      'query($id: ID!) { plans { id } organisation(id: $id) { plan { id name packages { id name } } } }',
      { id: organisationId },
    );
    expect(plan.data?.plans.map((entry) => entry.id)).not.toContain('enterprise');
    expect(plan.data?.organisation).toEqual({ plan: { id: 'enterprise', name: 'Enterprise', packages: [{ id: 'enterprise', name: 'Enterprise' }] } });
  });
});

function cookieClient(app: TestApp, person: Person): Client {
  const headers = { cookie: `svc_membership_session=${person.web.cookie}`, origin: app.url };
  const CookieSocket = class extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  };
  return createClient({ url: `${app.url.replace('http', 'ws')}/graphql`, webSocketImpl: CookieSocket, retryAttempts: 0 });
}

function sink<T>(onData: (data: T) => void) {
  return {
    next: (result: { data?: T | null; errors?: unknown }) => {
      if (result.data) onData(result.data);
    },
    error: () => undefined,
    complete: () => undefined,
  };
}

/**
 * Issue 46 item 1: an organisation upgrades the way a member does — checkout with the organisation as
 * the payer, paid by its owner or an admin, through the same orders, notices and subscriptions — on two
 * instances sharing PostgreSQL and Redis. The organisation's package and term change; the payer's own do
 * not. A plain member of the organisation gets 403, someone outside it 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { addMember, applyFor, organisationKey } from '../../helpers/enterprise.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  setup = await realMode();
  const options = { config: { payments: { sandbox: { enabled: true } }, rateLimits: { ipPerMinute: 100_000 } } };
  a = await startApp(setup.config, options);
  b = await startApp(setup.config, options);
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await setup?.cleanup();
});

interface OrderJson {
  id: string;
  state: string;
  packageId: string;
  organisationId: string | null;
  amountMinor: number;
}

const verify = (accountId: string) => setup.database.query('update account set email_verified_at = now() where id = $1', [accountId]);

async function organisationWithStaff(): Promise<{ owner: Person; admin: Person; member: Person; organisationId: string }> {
  const owner = await seed(a).member({ tag: 'org-owner' });
  const admin = await seed(a).member({ tag: 'org-admin' });
  const member = await seed(a).member({ tag: 'org-member' });
  const { organisationId } = await applyFor(owner);
  await addMember(owner, organisationId!, admin, 'admin', verify);
  await addMember(owner, organisationId!, member, 'member', verify);
  return { owner, admin, member, organisationId: organisationId! };
}

async function packageOf(accountId: string): Promise<string> {
  return (await setup.database.query('select plan_package from account where id = $1', [accountId])).rows[0].plan_package as string;
}

async function keyUsagePackage(app: TestApp, token: string): Promise<string> {
  const response = await fetch(`${app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { packageId: string }).packageId;
}

describe('organisation checkout', () => {
  it('the owner pays through the sandbox with the organisation as payer: the organisation is on Pro at once on every instance; the owner stays on Free', async () => {
    const { owner, organisationId } = await organisationWithStaff();
    const token = await organisationKey(owner, organisationId);
    // B has the key's principal (with its Free package) cached before the payment.
    expect(await keyUsagePackage(b, token)).toBe('free');

    const opened = await owner.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'sandbox', currency: 'USD', organisationId } });
    expect(opened.status).toBe(201);
    const { order } = (await opened.json()) as { order: OrderJson };
    expect(order).toMatchObject({ state: 'created', packageId: 'pro', organisationId, amountMinor: 900 });
    const paid = await owner.web.at(b.url).fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' });
    expect(paid.status).toBe(200);
    expect(((await paid.json()) as { order: OrderJson }).order.state).toBe('paid');

    // The organisation's account and term moved; the owner's did not.
    expect(await packageOf(organisationId)).toBe('pro');
    expect(await packageOf(owner.id)).toBe('free');
    expect(await keyUsagePackage(b, token)).toBe('pro');
    const own = (await (await owner.web.fetch('/api/membership/subscription')).json()) as { subscription: unknown };
    expect(own.subscription).toBeNull();
    const theirs = (await (await owner.web.fetch(`/api/membership/subscription?organisationId=${organisationId}`)).json()) as { subscription: { packageId: string; state: string } };
    expect(theirs.subscription).toMatchObject({ packageId: 'pro', state: 'active' });
    const graph = await owner.web.graphql<{ organisation: { packageId: string; viewerCanManageBilling: boolean; subscription: { packageId: string } | null } }>(
      'query($id: ID!) { organisation(id: $id) { packageId viewerCanManageBilling subscription { packageId } } }',
      { id: organisationId },
    );
    expect(graph.data?.organisation).toEqual({ packageId: 'pro', viewerCanManageBilling: true, subscription: { packageId: 'pro' } });

    // The order is the organisation's: in its list, not the owner's own; the receipt goes to the owner.
    const orgOrders = (await (await owner.web.fetch(`/api/membership/orders?organisationId=${organisationId}`)).json()) as { orders: OrderJson[] };
    expect(orgOrders.orders.map((entry) => entry.id)).toEqual([order.id]);
    const ownOrders = (await (await owner.web.fetch('/api/membership/orders')).json()) as { orders: OrderJson[] };
    expect(ownOrders.orders).toEqual([]);
    const receipt = [a, b].map((app) => app.app.services.mailer.lastTo(owner.email)).find((mail) => mail?.text.includes(order.id));
    expect(receipt?.text).toContain(`/enterprise/console?org=${organisationId}`);

    // Audited like a member's order: created by the owner for the organisation, paid, the package set.
    const audit = await setup.database.query(`select actor_id, action, target_id from audit_log where (target_id = $1 or target_id = $2) order by id`, [order.id, organisationId]);
    expect(audit.rows).toEqual([
      { actor_id: owner.id, action: 'order:create', target_id: order.id },
      { actor_id: null, action: 'order:paid', target_id: order.id },
      { actor_id: null, action: 'subscription:start', target_id: organisationId },
      { actor_id: null, action: 'account:set-package', target_id: organisationId },
    ]);
  });

  it('an admin upgrades it over GraphQL (the unused month credited, as for a member); the owner cancels it at the period end', async () => {
    const { owner, admin, organisationId } = await organisationWithStaff();
    const buy = async (person: Person, packageId: string) => {
      const opened = await person.web.graphql<{ checkout: { order: OrderJson } }>(
        'mutation($org: ID!, $pkg: String!) { checkout(packageId: $pkg, provider: sandbox, currency: "USD", organisationId: $org) { order { id state packageId organisationId amountMinor } } }',
        { org: organisationId, pkg: packageId },
      );
      expect(opened.errors).toBeUndefined();
      const order = opened.data!.checkout.order;
      const paid = await person.web.graphql<{ sandboxPayOrder: { state: string } }>('mutation($id: ID!) { sandboxPayOrder(orderId: $id) { state } }', { id: order.id });
      expect(paid.data?.sandboxPayOrder.state).toBe('paid');
      return order;
    };
    await buy(admin, 'pro');
    const upgrade = await buy(admin, 'max_x5');
    expect(upgrade.organisationId).toBe(organisationId);
    expect(upgrade.amountMinor).toBeLessThan(1900);
    expect(await packageOf(organisationId)).toBe('max_x5');
    expect(await packageOf(admin.id)).toBe('free');

    const cancelled = await owner.web.fetch('/api/membership/subscription/cancel', { body: { organisationId } });
    expect(cancelled.status).toBe(200);
    expect(((await cancelled.json()) as { subscription: { cancelAtPeriodEnd: boolean; packageId: string } }).subscription).toMatchObject({ cancelAtPeriodEnd: true, packageId: 'max_x5' });
    const { rows } = await setup.database.query(`select actor_id from audit_log where action = 'subscription:cancel' and target_id = $1`, [organisationId]);
    expect(rows).toEqual([{ actor_id: owner.id }]);
  });

  it('a plain member of the organisation gets 403 for its checkout, orders and subscription; someone outside it 404', async () => {
    const { owner, member, organisationId } = await organisationWithStaff();
    const stranger = await seed(a).member({ tag: 'org-stranger' });
    const body = { packageId: 'pro', provider: 'sandbox', currency: 'USD', organisationId };
    for (const [person, status, code] of [
      [member, 403, 'forbidden'],
      [stranger, 404, 'not_found'],
    ] as const) {
      const refused = await person.web.fetch('/api/membership/checkout', { body });
      expect(refused.status).toBe(status);
      expect(((await refused.json()) as { code: string }).code).toBe(code);
      expect((await person.web.fetch(`/api/membership/orders?organisationId=${organisationId}`)).status).toBe(status);
      expect((await person.web.fetch(`/api/membership/subscription?organisationId=${organisationId}`)).status).toBe(status);
      expect((await person.web.fetch('/api/membership/subscription/cancel', { body: { organisationId } })).status).toBe(status);
      const graph = await person.web.graphql('mutation($org: ID!) { checkout(packageId: "pro", provider: sandbox, currency: "USD", organisationId: $org) { order { id } } }', { org: organisationId });
      expect(graph.errors?.[0]?.extensions?.code).toBe(code);
    }
    const forbidden = (await (await member.web.fetch('/api/membership/checkout', { body })).json()) as { message: string; messageZh: string };
    expect(forbidden.message).toContain('organisation:billing:manage needs the organisation role admin or higher; yours is member');
    expect(forbidden.messageZh).toMatch(/\p{Script=Han}/u);

    // The owner's open order is not the plain member's to see or pay.
    const opened = await owner.web.fetch('/api/membership/checkout', { body });
    const { order } = (await opened.json()) as { order: OrderJson };
    expect((await member.web.fetch(`/api/membership/orders/${order.id}`)).status).toBe(404);
    expect((await member.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' })).status).toBe(404);
    const view = await member.web.graphql<{ organisation: { viewerCanManageBilling: boolean; subscription: unknown } }>('query($id: ID!) { organisation(id: $id) { viewerCanManageBilling subscription { packageId } } }', {
      id: organisationId,
    });
    expect(view.data?.organisation).toEqual({ viewerCanManageBilling: false, subscription: null });
    expect(await packageOf(organisationId)).toBe('free');
    // Nothing was created for anyone but the owner's one order.
    const { rows } = await setup.database.query('select count(*)::int as n from billing_order where account_id = $1', [organisationId]);
    expect(rows[0].n).toBe(1);
  });

  it("an organisation key or the owner's personal key cannot buy for it: checkout needs the web session", async () => {
    const { owner, organisationId } = await organisationWithStaff();
    const orgToken = await organisationKey(owner, organisationId);
    const personal = await owner.key();
    for (const token of [orgToken, personal]) {
      const response = await fetch(`${a.url}/api/membership/checkout`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ packageId: 'pro', provider: 'sandbox', currency: 'USD', organisationId }),
      });
      expect(response.status).toBe(401);
    }
    expect(await packageOf(organisationId)).toBe('free');
  });
});

/**
 * Seed data for a test, through the app's own services, in chained steps that return what the next step
 * needs (after Hive's `initSeed().createOwner()` → `createOrg()`):
 *
 *   const member = await seed(app).member({ planPackage: 'pro' });
 *   const { key, client } = await member.withKey();      // an svc_live_ key and an OpenAI client on it
 *   await member.web.graphql('{ me { email } }');        // its browser, signed in (a web session cookie)
 *   const admin = await seed(app).staff('admin');         // a signed-in admin
 *   await admin.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "spam") { id } }', { id: member.id });
 *
 * Each call makes a fresh account with a unique email, so tests own their tenants and can run side by side.
 */
import OpenAI from 'openai';
import type { FastifyInstance } from 'fastify';
import type { AccountRole } from '../../server/authz/principal.ts';
import { Browser, uniqueEmail } from './browser.ts';

export interface SeededKey {
  key: string;
  keyId: string;
  /** The official SDK pointed at the app with this key (no retries: tests see every answer). */
  client: OpenAI;
}

export interface Person {
  id: string;
  email: string;
  role: AccountRole;
  password: string;
  /** This person's browser, signed in (a fresh web session). */
  web: Browser;
  /** Mints a personal API key: its token, id and an OpenAI client on it. */
  withKey(name?: string): Promise<SeededKey>;
  /** Mints a personal API key and returns just its token. */
  key(name?: string): Promise<string>;
}

export interface SeedTarget {
  app: FastifyInstance;
  url: string;
}

const password = 'correct horse battery staple';

export function seed(target: SeedTarget) {
  const { services } = target.app;

  async function person(role: AccountRole, options: { tag?: string; planPackage?: string }): Promise<Person> {
    const email = uniqueEmail(options.tag ?? role);
    const { account } = await services.accounts.createUser({ email, password, role });
    if (options.planPackage) {
      await services.db.orm.em.getConnection().execute(`update account set plan_package = ? where id = ?`, [options.planPackage, account.id]);
      await services.identity.invalidateAccount(account.id);
    }
    const { token } = await services.sessions.startWebSession(account.id, { ip: '127.0.0.1', userAgent: 'test browser' });
    const withKey = async (name = 'test key'): Promise<SeededKey> => {
      const { key, token: secret } = await services.apiKeys.createForAccount(account.id, { name });
      return { key: secret, keyId: key.id, client: new OpenAI({ apiKey: secret, baseURL: `${target.url}/v1`, maxRetries: 0 }) };
    };
    return {
      id: account.id,
      email,
      role,
      password,
      web: new Browser(target.url, target.url, token),
      withKey,
      key: async (name) => (await withKey(name)).key,
    };
  }

  return {
    member: (options: { tag?: string; planPackage?: string } = {}) => person('member', options),
    staff: (role: Exclude<AccountRole, 'member'> = 'support', tag: string = role) => person(role, { tag }),
  };
}

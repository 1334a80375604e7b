/**
 * Seed data for a test, through the app's own services, in chained steps that return what the next step
 * needs (after Hive's `initSeed().createOwner()` → `createOrg()`):
 *
 *   const member = await seed(app).member({ planPackage: 'pro' });
 *   const { key, client } = await member.withKey();      // an svc_live_ key and an OpenAI client on it
 *   const browser = await member.signIn();               // a web session, as the web app has one
 *   const staff = await seed(app).staff('support');      // a signed-in support account
 *
 * Each call makes a fresh account with a unique email, so tests own their tenants and can run side by side.
 */
import OpenAI from 'openai';
import type { AccountRole } from '../../server/modules/account/account.entity.ts';
import type { TestApp } from './app.ts';
import { Browser, uniqueEmail } from './browser.ts';

export interface SeededKey {
  key: string;
  keyId: string;
  /** The official SDK pointed at the app with this key (no retries: tests see every answer). */
  client: OpenAI;
}

export interface SeededMember {
  accountId: string;
  email: string;
  password: string;
  /** Mints a personal API key. */
  withKey(name?: string): Promise<SeededKey>;
  /** Signs a fresh browser in (a web session cookie). */
  signIn(): Promise<Browser>;
}

const password = 'correct horse battery staple';

export function seed(app: TestApp) {
  const { services } = app.app;

  async function account(options: { planPackage?: string; role?: AccountRole; tag?: string }): Promise<SeededMember> {
    const email = uniqueEmail(options.tag ?? 'member');
    const created = await services.accounts.signUp({ email, password, role: options.role });
    if (options.planPackage) {
      await services.db.orm.em.getConnection().execute(`update account set plan_package = ? where id = ?`, [options.planPackage, created.id]);
      await services.identity.invalidateAccount(created.id);
    }
    return {
      accountId: created.id,
      email,
      password,
      async withKey(name = 'test key') {
        const { key, token } = await services.apiKeys.createForAccount(created.id, { name });
        return { key: token, keyId: key.id, client: new OpenAI({ apiKey: token, baseURL: `${app.url}/v1`, maxRetries: 0 }) };
      },
      async signIn() {
        const browser = new Browser(app.url);
        const response = await browser.fetch('/api/membership/auth/login', { body: { email, password } });
        if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
        return browser;
      },
    };
  }

  return {
    member: (options: { planPackage?: string } = {}) => account({ ...options, tag: 'member' }),
    staff: (role: Exclude<AccountRole, 'member'> = 'support') => account({ role, tag: role }),
  };
}

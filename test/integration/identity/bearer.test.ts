/**
 * The contract the gateway depends on: `services.identity.authenticateBearer` over personal keys and
 * device-login session tokens, its 401 messages, the cache, cross-instance revocation through Redis
 * pub/sub, batched `lastUsedAt`, and `GET /v1/models` for an authenticated caller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../server/errors/app-error.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let one: TestApp;
let two: TestApp;

beforeAll(async () => {
  setup = await realMode();
  one = await startApp(setup.config);
  two = await startApp(setup.config);
});

afterAll(async () => {
  await Promise.allSettled([one?.close(), two?.close()]);
  await setup?.cleanup();
});

async function newMember(tag: string) {
  const account = await one.app.services.accounts.signUp({ email: `${tag}-${Date.now()}@example.com`, password: 'correct horse battery' });
  const createKey = (name = 'test key') => one.app.services.apiKeys.createForAccount(account.id, { name });
  return { account, createKey };
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

function models(app: TestApp, token?: string) {
  return fetch(`${app.url}/v1/models`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
}

describe('authenticateBearer', () => {
  it('resolves a personal key to its account, with the plan package', async () => {
    const { account, createKey } = await newMember('bearer-ok');
    const { token, key } = await createKey();
    expect(token).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe(token.slice(0, 12));
    expect(key.last4).toBe(token.slice(-4));
    const principal = await one.app.services.identity.authenticateBearer(`Bearer ${token}`);
    expect(principal).toEqual({
      accountId: account.id,
      email: account.email,
      role: 'member',
      payer: { kind: 'account', id: account.id, package: 'free' },
      credential: { kind: 'api_key', id: key.id },
    });
  });

  it('answers 401 sign_in_required with a precise message for each kind of bad credential', async () => {
    const identity = one.app.services.identity;
    const cases: [string | undefined, RegExp][] = [
      [undefined, /send "Authorization: Bearer/],
      ['', /send "Authorization: Bearer/],
      ['Basic dXNlcjpwYXNz', /must be "Bearer <token>"/],
      ['Bearer a b', /must be "Bearer <token>"/],
      ['Bearer sk-openai-style', /not an svc credential/],
      ['Bearer svc_live_', /not an svc credential/],
      [`Bearer svc_live_${'x'.repeat(43)}`, /API key is not valid: it is unknown or has been revoked/],
      [`Bearer svc_sess_${'x'.repeat(43)}`, /session token is not valid/],
    ];
    for (const [header, message] of cases) {
      const error = await rejection(identity.authenticateBearer(header));
      expect(error.code, String(header)).toBe('sign_in_required');
      expect(error.message, String(header)).toMatch(message);
    }
  });

  it('GET /v1/models lists the catalogue in the OpenAI shape for a key, and 401s without one', async () => {
    const { createKey } = await newMember('models');
    const { token } = await createKey();
    const response = await models(one, token);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { object: string; data: { id: string; object: string; created: number; owned_by: string }[] };
    expect(body.object).toBe('list');
    expect(body.data.map((model) => model.id)).toEqual(one.app.services.models.ids);
    // The OpenAI fields, plus the limits OpenRouter-style clients read (docs/api.md) and nothing else.
    for (const model of body.data) {
      expect(model).toMatchObject({ id: model.id, object: 'model', created: expect.any(Number), owned_by: 'svc' });
      expect(Object.keys(model).filter((key) => !['id', 'object', 'created', 'owned_by', 'context_length', 'max_output_tokens'].includes(key))).toEqual([]);
    }
    expect(body.data.find((model) => model.id === 'auto')).toMatchObject({ context_length: expect.any(Number), max_output_tokens: expect.any(Number) });

    const single = await fetch(`${one.url}/v1/models/svc-2.1`, { headers: { authorization: `Bearer ${token}` } });
    expect(await single.json()).toMatchObject({ id: 'svc-2.1', object: 'model' });
    const missing = await fetch(`${one.url}/v1/models/gpt-4`, { headers: { authorization: `Bearer ${token}` } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'model_not_found' });

    const anonymous = await models(one);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('x-svc-error-code')).toBe('sign_in_required');
    expect(await anonymous.json()).toMatchObject({ ok: false, code: 'sign_in_required', stage: 'auth', error: { type: 'authentication_error' } });
  });

  it('a key revoked on one instance fails at once on the other (both had it cached)', async () => {
    const { account, createKey } = await newMember('revoke');
    const { token, key } = await createKey();
    // Warm both caches: the chat path's cache hit (no hashing, no promise) answers for the key.
    expect((await models(one, token)).status).toBe(200);
    expect((await models(two, token)).status).toBe(200);
    for (const app of [one, two]) expect(app.app.services.identity.authenticateCached(`Bearer ${token}`)).toMatchObject({ credential: { kind: 'api_key', id: key.id } });
    await one.app.services.apiKeys.revokeForAccount(account.id, key.id);
    // The token's remembered hash outlives the revocation; what it pointed to does not.
    await expect.poll(() => two.app.services.identity.authenticateCached(`Bearer ${token}`), { timeout: 3000, interval: 25 }).toBeNull();
    expect(one.app.services.identity.authenticateCached(`Bearer ${token}`)).toBeNull();
    const [onOne, onTwo] = await Promise.all([models(one, token), models(two, token)]);
    expect(onOne.status).toBe(401);
    expect(onTwo.status).toBe(401);
    expect(await onTwo.json()).toMatchObject({ code: 'sign_in_required' });
  });

  it('an instance whose pub/sub connection is down does not trust its cache; once back it hears revocations again', async () => {
    const deaf = await startApp(setup.config);
    try {
      const { account, createKey } = await newMember('deaf');
      const first = await createKey('first');
      const second = await createKey('second');
      await until(async () => deaf.app.services.identity.hearingInvalidations);
      expect((await models(deaf, first.token)).status).toBe(200);
      expect((await models(deaf, second.token)).status).toBe(200);
      // The subscriber connection drops: a revocation published now never reaches this instance.
      const subscriber = deaf.app.services.redis.subscriber!;
      subscriber.disconnect();
      await until(async () => !deaf.app.services.identity.hearingInvalidations);
      await one.app.services.apiKeys.revokeForAccount(account.id, first.key.id);
      expect((await models(deaf, first.token)).status).toBe(401);

      // Back (and subscribed again): it caches, and a revocation reaches it at once.
      await subscriber.connect();
      await until(async () => deaf.app.services.identity.hearingInvalidations);
      expect((await models(deaf, second.token)).status).toBe(200);
      await one.app.services.apiKeys.revokeForAccount(account.id, second.key.id);
      // Delivered by pub/sub (or the outbox within a second): polled, not assumed to have arrived already.
      await expect.poll(async () => (await models(deaf, second.token)).status, { timeout: 3000, interval: 25 }).toBe(401);
    } finally {
      await deaf.close();
    }
  });

  it('records lastUsedAt in batches, not one write per request', async () => {
    const { account, createKey } = await newMember('last-used');
    const { token, key } = await createKey();
    expect(key.lastUsedAt).toBeNull();
    const before = Date.now();
    for (let i = 0; i < 20; i += 1) await one.app.services.identity.authenticateBearer(`Bearer ${token}`);
    const unflushed = await setup.database.query('select last_used_at from api_key where id = $1', [key.id]);
    expect(unflushed.rows[0].last_used_at).toBeNull();
    await one.app.services.lastUsed.flush();
    const [listed] = await one.app.services.apiKeys.listForAccount(account.id);
    expect(listed!.lastUsedAt!.getTime()).toBeGreaterThanOrEqual(before - 5);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

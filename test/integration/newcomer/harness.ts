/** Shared by the newcomer tests: a graphql-ws client that is a signed-in browser (its session cookie and our Origin). */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { TestApp } from '../../helpers/app.ts';
import type { Person } from '../../helpers/seed.ts';

export function cookieClient(app: TestApp, person: Person): Client {
  const headers = { cookie: `svc_membership_session=${person.web.cookie}`, origin: app.url };
  const CookieSocket = class extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  };
  return createClient({ url: `${app.url.replace('http', 'ws')}/graphql`, webSocketImpl: CookieSocket, retryAttempts: 0 });
}

/** The next event's data, failing on errors or a subscription that ended, within `timeoutMs`. */
export async function nextOf<T>(events: AsyncIterator<{ data?: T | null; errors?: readonly unknown[] }>, timeoutMs = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs)));
  try {
    const next = await Promise.race([events.next(), timeout]);
    if (next.done) throw new Error('the subscription ended');
    if (next.value.errors?.length || !next.value.data) throw new Error(`subscription error: ${JSON.stringify(next.value.errors)}`);
    return next.value.data;
  } finally {
    clearTimeout(timer);
  }
}

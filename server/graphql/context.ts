import type { Principal } from '../modules/identity/principal.ts';
import type { ClientInfo } from '../modules/session/session.service.ts';
import type { WebSessionControl } from '../http/web-session.ts';
import type { Services } from '../services.ts';

/** What every resolver receives. Built per operation by `graphql/yoga.ts`. */
export interface GraphQLContext {
  requestId: string;
  services: Services;
  principal: Principal | null;
  /** Caller IP and user agent, for throttling and the session list. */
  client: ClientInfo;
  /** Sets and clears the session cookie; null over WebSocket, where there is no cookie to set. */
  web: WebSessionControl | null;
}

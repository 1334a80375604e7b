import type { AppError } from '../errors/app-error.ts';
import type { Principal } from '../modules/identity/principal.ts';
import type { ClientInfo } from '../modules/session/session.service.ts';
import type { WebSessionControl } from '../http/web-session.ts';
import type { Services } from '../services.ts';

/** What every resolver receives. Built per operation by `graphql/yoga.ts`. */
export interface GraphQLContext {
  /** The `mbr_…` id of this request (HTTP: the x-svc-request-id header) or of this graphql-ws operation. */
  requestId: string;
  services: Services;
  principal: Principal | null;
  /** Why a session cookie that came with the request was refused (account disabled, expired), or null. */
  signedOutReason: AppError | null;
  /** Caller IP and user agent, for throttling and the session list. */
  client: ClientInfo;
  /** Sets and clears the session cookie; null over WebSocket, where there is no cookie to set. */
  web: WebSessionControl | null;
}

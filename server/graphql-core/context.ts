import type { AppError } from '../errors/app-error.ts';
import type { Principal } from '../authz/principal.ts';
import type { ClientInfo } from '../http/client-info.ts';
import type { WebSessionControl } from '../http/web-session.ts';

/**
 * The services a resolver reaches. Empty on this floor, which the modules' `*.schema.ts` stand on and which
 * so imports nothing above it; the composition root (`services.ts`) merges its `Services` in with a
 * `declare module`, as Fastify's decorators are typed, so every resolver sees every service typed.
 * @public
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ResolverServices {}

/** What every resolver receives. Built per operation by `graphql/yoga.ts`. */
export interface GraphQLContext {
  /** The `mbr_…` id of this request (HTTP: the x-svc-request-id header) or of this graphql-ws operation. */
  requestId: string;
  services: ResolverServices;
  principal: Principal | null;
  /** Why a session cookie that came with the request was refused (account disabled, expired), or null. */
  signedOutReason: AppError | null;
  /** Caller IP and user agent, for throttling and the session list. */
  client: ClientInfo;
  /** Sets and clears the session cookie; null over WebSocket, where there is no cookie to set. */
  web: WebSessionControl | null;
}

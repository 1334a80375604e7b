import { builder } from '../../graphql-core/builder.ts';
import type { ConsentDecision, ConsentView } from './oauth.service.ts';

const OAuthRequestStateEnum = builder.enumType('OAuthRequestState', {
  description: 'Where an MCP client’s sign-in request stands.',
  values: {
    pending: { value: 'pending', description: 'Waiting for you to approve or deny.' },
    approved: { value: 'approved', description: 'Approved; the client received a one-time code for its tokens.' },
    denied: { value: 'denied', description: 'Denied; the client was told so.' },
    expired: { value: 'expired', description: 'Nobody decided in time; start again in the client.' },
  } as const,
});

const OAuthAuthorizationRequestRef = builder.objectRef<ConsentView>('OAuthAuthorizationRequest').implement({
  description: 'An MCP client asking, by OAuth, to use svc’s hosted tools (scope mcp) for your account: what the consent page shows.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The request id (from the consent page’s address).' }),
    clientName: t.exposeString('clientName', { description: 'The client’s name, as it named itself when it registered.' }),
    clientUri: t.exposeString('clientUri', { nullable: true, description: 'The client’s home page, as it gave it.' }),
    redirectUri: t.exposeString('redirectUri', { description: 'Where the browser is sent back to with the code.' }),
    redirectHost: t.exposeString('redirectHost', { description: 'The host (and port) of redirectUri, or its scheme for an app scheme.' }),
    scope: t.exposeString('scope', { description: 'What is granted: mcp (the tools on /v1/mcp, billed to your plan).' }),
    resource: t.exposeString('resource', { nullable: true, description: 'The resource the client named (RFC 8707), if any.' }),
    state: t.expose('state', { type: OAuthRequestStateEnum, description: 'pending, approved, denied or expired.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'Until when the request can be decided.' }),
  }),
});

const OAuthDecisionRef = builder.objectRef<ConsentDecision>('OAuthDecision').implement({
  description: 'The outcome of approving or denying: the request, and where to send the browser next.',
  fields: (t) => ({
    request: t.field({ type: OAuthAuthorizationRequestRef, description: 'The request, decided.', resolve: (decision) => decision.request }),
    redirectTo: t.exposeString('redirectTo', { description: 'The client’s redirect URI with the code (or error=access_denied), state and iss.' }),
  }),
});

builder.queryField('oauthAuthorizationRequest', (t) =>
  t.field({
    type: OAuthAuthorizationRequestRef,
    authScopes: { signedIn: true },
    description: 'Opens an MCP client’s sign-in request for the consent page (needs a web session).',
    args: { id: t.arg.id({ required: true, description: 'The request id from /oauth/consent?request=….' }) },
    resolve: (_root, args, { principal, services }) => services.oauthAuthorizations.open(principal, String(args.id)),
  }),
);

builder.mutationField('approveOAuthAuthorization', (t) =>
  t.field({
    type: OAuthDecisionRef,
    authScopes: { signedIn: true },
    description: 'Approves an MCP client’s sign-in request: it gets a one-time code for tokens that work only on /v1/mcp.',
    args: { id: t.arg.id({ required: true, description: 'The request id.' }) },
    resolve: (_root, args, { principal, services }) => services.oauthAuthorizations.decide(principal, String(args.id), 'approve'),
  }),
);

builder.mutationField('denyOAuthAuthorization', (t) =>
  t.field({
    type: OAuthDecisionRef,
    authScopes: { signedIn: true },
    description: 'Denies an MCP client’s sign-in request: it is sent back with error=access_denied.',
    args: { id: t.arg.id({ required: true, description: 'The request id.' }) },
    resolve: (_root, args, { principal, services }) => services.oauthAuthorizations.decide(principal, String(args.id), 'deny'),
  }),
);

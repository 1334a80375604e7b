import { builder } from '../../graphql-core/builder.ts';
import type { SessionView } from './session.service.ts';

const SessionKindEnum = builder.enumType('SessionKind', {
  description: 'How a session is carried.',
  values: {
    web: { value: 'web', description: 'A browser, by the svc_membership_session cookie.' },
    device: { value: 'device', description: 'A bearer session token from device login (CLI, scripts).' },
    mcp: { value: 'mcp', description: 'An MCP client signed in by OAuth: its tokens work only on the MCP endpoints (/v1/mcp).' },
  } as const,
});

export const SessionRef = builder.objectRef<SessionView>('Session').implement({
  description: 'A signed-in browser, a device-login token or an MCP client (OAuth) of your account.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Session id (not the secret).' }),
    kind: t.expose('kind', { type: SessionKindEnum, description: 'web, device or mcp.' }),
    clientName: t.exposeString('clientName', { nullable: true, description: 'For device logins and MCP clients: the client that asked, as it named itself.' }),
    userAgent: t.exposeString('userAgent', { nullable: true, description: 'Browser or client user agent at sign-in.' }),
    ip: t.exposeString('ip', { nullable: true, description: 'Address at sign-in.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'Sign-in time.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', description: 'Last use (recorded within seconds).' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'Absolute expiry.' }),
    current: t.exposeBoolean('current', { description: 'True for the session making this request.' }),
  }),
});

builder.queryField('sessions', (t) =>
  t.field({
    type: [SessionRef],
    authScopes: { signedIn: true },
    description: 'Your live sessions: browsers and device-login tokens (needs a web session).',
    resolve: (_root, _args, { principal, services }) => services.sessions.list(principal),
  }),
);

builder.mutationField('revokeSession', (t) =>
  t.field({
    type: SessionRef,
    authScopes: { signedIn: true },
    description: 'Signs a browser or device out; it stops working at once on every server (needs a web session).',
    args: { id: t.arg.id({ required: true, description: 'Session id.' }) },
    resolve: (_root, args, { principal, services }) => services.sessions.revoke(principal, String(args.id)),
  }),
);

builder.mutationField('revokeOtherSessions', (t) =>
  t.field({
    type: 'Int',
    authScopes: { signedIn: true },
    description: 'Signs out every other browser and device, device-login tokens included; returns how many sessions ended (needs a web session).',
    resolve: (_root, _args, { principal, services }) => services.sessions.revokeOthers(principal),
  }),
);

import { builder } from '../../graphql-core/builder.ts';
import type { DeviceAuthView } from './device-auth.service.ts';

const DeviceAuthStateEnum = builder.enumType('DeviceAuthState', {
  description: 'Where a device login stands.',
  values: {
    pending: { value: 'pending', description: 'Waiting for you to approve or deny.' },
    approved: { value: 'approved', description: 'Approved; the device receives its token on its next poll.' },
    denied: { value: 'denied', description: 'Denied; the device is told so.' },
    expired: { value: 'expired', description: 'The code ran out before a decision.' },
  } as const,
});

const DeviceAuthorizationRef = builder.objectRef<DeviceAuthView>('DeviceAuthorization').implement({
  description: 'A device (CLI) asking to sign in to your account.',
  fields: (t) => ({
    userCode: t.exposeString('userCode', { description: 'The code the device shows, e.g. BCDF-GHJK.' }),
    clientName: t.exposeString('clientName', { description: 'The client that asked, as it named itself.' }),
    state: t.expose('state', { type: DeviceAuthStateEnum, description: 'pending, approved, denied or expired.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the device started the login.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When the code stops working.' }),
  }),
});

builder.queryField('deviceAuthorization', (t) =>
  t.field({
    type: DeviceAuthorizationRef,
    authScopes: { signedIn: true },
    description: 'Opens a device login by its user code. The first signed-in browser session to open a code owns it.',
    args: { userCode: t.arg.string({ required: true, description: 'The code shown by the device (case and dash ignored).' }) },
    resolve: (_root, args, { principal, services, client }) => services.deviceAuth.open(principal, args.userCode, client),
  }),
);

builder.mutationField('approveDevice', (t) =>
  t.field({
    type: DeviceAuthorizationRef,
    authScopes: { signedIn: true },
    description: 'Approves a device login you opened: the device gets a session token for your account.',
    args: { userCode: t.arg.string({ required: true, description: 'The code shown by the device.' }) },
    resolve: (_root, args, { principal, services, client }) => services.deviceAuth.decide(principal, args.userCode, 'approve', client),
  }),
);

builder.mutationField('denyDevice', (t) =>
  t.field({
    type: DeviceAuthorizationRef,
    authScopes: { signedIn: true },
    description: 'Denies a device login you opened.',
    args: { userCode: t.arg.string({ required: true, description: 'The code shown by the device.' }) },
    resolve: (_root, args, { principal, services, client }) => services.deviceAuth.decide(principal, args.userCode, 'deny', client),
  }),
);

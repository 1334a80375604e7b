import { builder } from '../../graphql-core/builder.ts';
import type { GraphQLContext } from '../../graphql-core/context.ts';
import { AppError } from '../../errors/app-error.ts';
import type { AccountView } from './account.service.ts';
import type { MailDelivery } from './mailer.ts';
import { signOut } from '../../http/web-session.ts';
import * as authz from '../../authz/authz.ts';

export const AccountRoleEnum = builder.enumType('AccountRole', {
  description: 'What an account may do: members use the service; support and admin staff run it.',
  values: {
    member: { value: 'member', description: 'A customer.' },
    support: { value: 'support', description: 'Staff: reviews applications and looks up accounts.' },
    admin: { value: 'admin', description: 'Staff with every permission.' },
  } as const,
});

export const AccountRef = builder.objectRef<AccountView>('Account').implement({
  description: 'A member account.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Account id.' }),
    email: t.exposeString('email', { description: 'Sign-in email, lower-cased.' }),
    displayName: t.exposeString('displayName', { nullable: true, description: 'Name shown in the app, if set.' }),
    role: t.expose('role', { type: AccountRoleEnum, description: 'member, support or admin.' }),
    planPackage: t.exposeString('planPackage', { description: 'Plan package the account is on: free, pro, max_x5 or max_x20.' }),
    planPackageUntil: t.expose('planPackageUntil', {
      type: 'DateTime',
      nullable: true,
      description: 'When a package given for a limited time ends and the account returns to Free; null when it does not end.',
    }),
    disabled: t.boolean({ description: 'Whether staff disabled the account (every credential of it is refused).', resolve: (account) => account.disabledAt !== null }),
    disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true, description: 'When staff disabled the account; null while it is enabled.' }),
    emailVerified: t.exposeBoolean('emailVerified', { description: 'Whether the email was proven (email code or identity provider).' }),
    hasPassword: t.exposeBoolean('hasPassword', { description: 'Whether the account can sign in with a password.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the account was created.' }),
    // What the signed-in viewer may do in the staff app, from the same authz rules the services enforce, so
    // the app shows an action exactly when the server would allow it. They describe the viewer, whichever
    // account they are read on; all false over a bearer credential (staff act only from a web session).
    viewerCanReviewApplications: t.boolean({
      description: 'Whether you (the signed-in viewer) may review enterprise applications: support and admin, from a web session.',
      resolve: (_account, _args, { principal }) => authz.can(principal, 'application:review'),
    }),
    viewerCanManageAccounts: t.boolean({
      description:
        'Whether you (the signed-in viewer) may look accounts up, disable and enable them, end their sessions, revoke their keys and change their package: support and admin, from a web session.',
      resolve: (_account, _args, { principal }) => authz.can(principal, 'account:disable'),
    }),
    viewerCanManageStaff: t.boolean({
      description: "Whether you (the signed-in viewer) may change accounts' roles and act on staff accounts: admin, from a web session.",
      resolve: (_account, _args, { principal }) => authz.can(principal, 'staff:set-role'),
    }),
    viewerCanRefund: t.boolean({
      description: 'Whether you (the signed-in viewer) may refund orders: admin, from a web session.',
      resolve: (_account, _args, { principal }) => authz.can(principal, 'order:refund'),
    }),
    viewerCanReadAuditLog: t.boolean({
      description: 'Whether you (the signed-in viewer) may read the audit log: support and admin, from a web session.',
      resolve: (_account, _args, { principal }) => authz.can(principal, 'audit:read'),
    }),
    locale: t.exposeString('locale', {
      nullable: true,
      description: 'The language the member picked for the web app and their email: en or zh-CN; null follows the browser.',
    }),
  }),
});

interface AuthProviders {
  password: boolean;
  emailCode: boolean;
  mailDelivery: MailDelivery;
  mailLogged: boolean;
  oidcLabel: string | null;
}

const AuthProvidersRef = builder.objectRef<AuthProviders>('AuthProviders').implement({
  description: 'The sign-in methods this server offers.',
  fields: (t) => ({
    password: t.exposeBoolean('password', { description: 'Email and password.' }),
    emailCode: t.exposeBoolean('emailCode', { description: 'A 6-digit code sent by email (false when no code could reach anyone: production without a mail server).' }),
    mailDelivery: t.exposeString('mailDelivery', {
      description:
        'How codes reach people: smtp (emailed); outbox (no mail server, development: staff read mail in the admin app at /admin/outbox); log (no mail server: only the server log); unavailable (no mail server in production: email codes are off).',
    }),
    mailLogged: t.exposeBoolean('mailLogged', { description: 'Without a mail server, mail is also printed to the server log (mail.logOutbox, SVC_MAIL_LOG_OUTBOX=1).' }),
    oidcLabel: t.exposeString('oidcLabel', {
      nullable: true,
      description: 'Label of the third-party sign-in button (GET /api/membership/auth/oidc/start), or null when not configured.',
    }),
  }),
});

const EmailCodeSentRef = builder.objectRef<{ email: string; expiresAt: Date }>('EmailCodeSent').implement({
  description: 'A sign-in or sign-up code is on its way (the answer is the same whether or not the account exists).',
  fields: (t) => ({
    email: t.exposeString('email', { description: 'Where the code was sent.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When the code stops working.' }),
  }),
});

function web(context: GraphQLContext) {
  if (!context.web) throw new AppError('invalid_request', 'Sign in and out over HTTP (POST /graphql), not over the WebSocket: the session is a cookie.');
  return context.web;
}

builder.queryField('me', (t) =>
  t.field({
    type: AccountRef,
    nullable: true,
    description: 'The signed-in account, or null when not signed in.',
    resolve: (_root, _args, { principal, services }) => (principal ? services.accounts.me(principal) : null),
  }),
);

builder.queryField('authProviders', (t) =>
  t.field({
    type: AuthProvidersRef,
    description: 'The sign-in methods this server offers.',
    resolve: (_root, _args, { services }) => ({
      password: true,
      emailCode: services.mailer.deliversToMembers,
      mailDelivery: services.mailer.mode,
      mailLogged: services.mailer.mode !== 'smtp' && services.config.mail.logOutbox,
      oidcLabel: services.oidc.label,
    }),
  }),
);

builder.mutationField('signUp', (t) =>
  t.field({
    type: EmailCodeSentRef,
    description:
      'Starts creating an account with email and password: emails a 6-digit code, and verifyEmailCode with it creates the account and signs the browser in. The answer is the same when the address already has an account (its owner is emailed instead).',
    args: {
      email: t.arg.string({ required: true, description: 'Email address.' }),
      password: t.arg.string({ required: true, description: 'At least 8 characters.' }),
    },
    resolve: (_root, args, { services, client }) => services.accounts.requestSignUp(args, client),
  }),
);

builder.mutationField('signIn', (t) =>
  t.field({
    type: AccountRef,
    description: 'Signs in with email and password; a new session cookie replaces any old one.',
    args: {
      email: t.arg.string({ required: true, description: 'Email address.' }),
      password: t.arg.string({ required: true, description: 'Password.' }),
    },
    resolve: async (_root, args, context) => {
      const control = web(context);
      const account = await context.services.accounts.signInWithPassword(args, control.client);
      await control.start(account.id);
      return account;
    },
  }),
);

builder.mutationField('startEmailCode', (t) =>
  t.field({
    type: EmailCodeSentRef,
    description: 'Emails a 6-digit sign-in code (valid 10 minutes, 5 attempts). Signing in with it creates the account if needed.',
    args: { email: t.arg.string({ required: true, description: 'Email address.' }) },
    resolve: (_root, args, { services, client }) => services.accounts.startEmailCode(args, client),
  }),
);

builder.mutationField('verifyEmailCode', (t) =>
  t.field({
    type: AccountRef,
    description: 'Signs in with an emailed code and sets the session cookie.',
    args: {
      email: t.arg.string({ required: true, description: 'Email address the code was sent to.' }),
      code: t.arg.string({ required: true, description: 'The 6 digits.' }),
    },
    resolve: async (_root, args, context) => {
      const control = web(context);
      const account = await context.services.accounts.verifyEmailCode(args, control.client);
      await control.start(account.id);
      return account;
    },
  }),
);

builder.mutationField('setLocale', (t) =>
  t.field({
    type: AccountRef,
    description: 'Stores the language the member picked (en or zh-CN): the web app uses it on every browser, and email is sent in it.',
    authScopes: { signedIn: true },
    args: { locale: t.arg.string({ required: true, description: 'en or zh-CN.' }) },
    resolve: (_root, args, { principal, services }) => services.accounts.setLocale(principal!, args.locale),
  }),
);

builder.mutationField('signOut', (t) =>
  t.field({
    type: 'Boolean',
    description: 'Signs out: ends the web session on the server and clears the cookie, or, called with a device-login bearer token, revokes that token.',
    resolve: async (_root, _args, context) => {
      await signOut(context.principal, web(context), context.services);
      return true;
    },
  }),
);

/**
 * Sign in with a password, an emailed code or (when configured) a third-party provider, or create an
 * account. Every path sets the session cookie on the server; `onSignedIn` then reloads what depends on it.
 * Creating an account emails a code first, and entering it creates the account (the server answers the
 * same whether or not the address has one, and mails an existing account's owner instead). Without a mail
 * server the page says where the code went instead of "we emailed it": to the admin app's outbox in
 * development, to the server log, or — in production — nowhere, and then it offers no code at all.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { ProblemLine } from '../../shell/components/query-state.tsx';
import { rovingKeys } from '../../shell/hooks/roving-keys.ts';
import { AUTH_PROVIDERS_QUERY } from '../graphql/auth-providers.query.ts';
import { SIGN_IN } from '../graphql/sign-in.mutation.ts';
import { SIGN_UP } from '../graphql/sign-up.mutation.ts';
import { START_EMAIL_CODE } from '../graphql/start-email-code.mutation.ts';
import { VERIFY_EMAIL_CODE } from '../graphql/verify-email-code.mutation.ts';

type Mode = 'sign-in' | 'email-code' | 'sign-up';

const tabs = [
  { mode: 'sign-in', label: 'auth.tabs.signIn' },
  { mode: 'email-code', label: 'auth.tabs.emailCode' },
  { mode: 'sign-up', label: 'auth.tabs.signUp' },
] as const satisfies readonly { mode: Mode; label: string }[];

/** The server's password rule (account.service `passwordRules.minLength`), shown before the member types. */
const passwordMinLength = 8;

/** `signUp: false` leaves the "Create account" tab out (the admin app signs existing staff in). */
export function SignInPanel({ onSignedIn, returnTo = '/account', signUp = true }: { onSignedIn(): Promise<void> | void; returnTo?: string; signUp?: boolean }) {
  const { t } = useTranslation('account');
  const [mode, setMode] = useState<Mode>('sign-in');
  const [signUpSentTo, setSignUpSentTo] = useState<string | null>(null);
  const providers = useQuery(AUTH_PROVIDERS_QUERY);
  const oidcLabel = providers.data?.authProviders.oidcLabel;
  const mail: MailDelivery = { delivery: providers.data?.authProviders.mailDelivery ?? 'smtp', logged: providers.data?.authProviders.mailLogged ?? false };
  const noMail = mail.delivery === 'unavailable';
  const id = useId();
  const shown = tabs.filter((tab) => signUp || tab.mode !== 'sign-up').map((tab) => tab.mode);
  const choose = (next: Mode) => {
    setMode(next);
    setSignUpSentTo(null);
  };
  return (
    <section className="auth-panel" aria-label={t('auth.label')}>
      <div className="auth-tabs" role="tablist" aria-label={t('auth.label')} onKeyDown={rovingKeys(shown, mode, choose)}>
        {tabs.filter((tab) => shown.includes(tab.mode)).map((tab) => (
          <button
            key={tab.mode}
            id={`${id}-tab-${tab.mode}`}
            type="button"
            role="tab"
            aria-selected={mode === tab.mode}
            aria-controls={`${id}-panel`}
            tabIndex={mode === tab.mode ? 0 : -1}
            className={`auth-tab${mode === tab.mode ? ' auth-tab--active' : ''}`}
            onClick={() => choose(tab.mode)}
          >
            {t(tab.label)}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${id}-panel`} aria-labelledby={`${id}-tab-${mode}`}>
        {mode === 'sign-in' && <PasswordForm kind="sign-in" onDone={onSignedIn} />}
        {mode !== 'sign-in' && noMail && <NoMail purpose={mode} />}
        {mode === 'sign-up' && !noMail && !signUpSentTo && <PasswordForm kind="sign-up" onDone={onSignedIn} onCodeSent={setSignUpSentTo} />}
        {mode === 'sign-up' && !noMail && signUpSentTo && <EmailCodeForm purpose="sign-up" sentTo={signUpSentTo} onBack={() => setSignUpSentTo(null)} onDone={onSignedIn} mail={mail} />}
        {mode === 'email-code' && !noMail && <EmailCodeForm purpose="sign-in" onDone={onSignedIn} mail={mail} />}
      </div>
      {oidcLabel && (
        <p className="auth-panel__alt">
          <a className="button button--ghost" href={`/api/membership/auth/oidc/start?returnTo=${encodeURIComponent(returnTo)}`}>
            {oidcLabel}
          </a>
        </p>
      )}
    </section>
  );
}

/** How this server's mail leaves it (AuthProviders.mailDelivery and mailLogged). */
interface MailDelivery {
  delivery: 'smtp' | 'outbox' | 'log' | 'unavailable';
  logged: boolean;
}

/** Production without a mail server: no code can reach anyone, so say so plainly instead of offering one. */
function NoMail({ purpose }: { purpose: 'sign-up' | 'email-code' }) {
  const { t } = useTranslation('account');
  return (
    <div className="auth-panel__notice" role="status">
      <p className="auth-panel__notice-title">{t('auth.noMail.title')}</p>
      <p>{t(purpose === 'sign-up' ? 'auth.noMail.signUp' : 'auth.noMail.emailCode')}</p>
    </div>
  );
}

/** Which sentence says where the code went: emailed, or (no mail server) the outbox, the log or both. */
function sentKey(purpose: 'sign-in' | 'sign-up', mail: MailDelivery) {
  const signUp = purpose === 'sign-up';
  if (mail.delivery === 'outbox' && mail.logged) return signUp ? 'auth.signUpCodeSentOutboxLogged' : 'auth.codeSentOutboxLogged';
  if (mail.delivery === 'outbox') return signUp ? 'auth.signUpCodeSentOutbox' : 'auth.codeSentOutbox';
  if (mail.delivery === 'log') return signUp ? 'auth.signUpCodeSentLog' : 'auth.codeSentLog';
  return signUp ? 'auth.signUpCodeSent' : 'auth.codeSent';
}

function PasswordForm({ kind, onDone, onCodeSent }: { kind: 'sign-in' | 'sign-up'; onDone(): Promise<void> | void; onCodeSent?(email: string): void }) {
  const { t } = useTranslation('account');
  const id = useId();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [signIn, signInState] = useMutation(SIGN_IN);
  const [signUp, signUpState] = useMutation(SIGN_UP);
  const [error, setError] = useState<unknown>(null);
  const busy = signInState.loading || signUpState.loading;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      if (kind === 'sign-in') {
        await signIn({ variables: { email, password } });
        await onDone();
      } else {
        const result = await signUp({ variables: { email, password } });
        onCodeSent?.(result.data?.signUp.email ?? email);
      }
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <form className="form" onSubmit={submit} aria-label={kind === 'sign-in' ? t('auth.passwordSignInLabel') : t('auth.signUpLabel')}>
      <label className="field" htmlFor={`${id}-email`}>
        <span>{t('auth.email')}</span>
        <input id={`${id}-email`} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label className="field" htmlFor={`${id}-password`}>
        <span>
          {t('auth.password')}
          {kind === 'sign-up' && <small className="muted">{t('auth.passwordHint', { min: passwordMinLength })}</small>}
        </span>
        <input
          id={`${id}-password`}
          type="password"
          autoComplete={kind === 'sign-in' ? 'current-password' : 'new-password'}
          minLength={kind === 'sign-up' ? passwordMinLength : undefined}
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </label>
      <ProblemLine error={error} />
      <button type="submit" className="button" disabled={busy}>
        {busy ? t('auth.pleaseWait') : kind === 'sign-in' ? t('auth.signIn') : t('auth.signUp')}
      </button>
    </form>
  );
}

/** `sign-in`: asks for the email, then the code. `sign-up`: the code a sign-up sent to `sentTo`; `onBack` returns to the form. */
function EmailCodeForm({
  purpose,
  onDone,
  mail,
  sentTo: sentAlready = null,
  onBack,
}: {
  purpose: 'sign-in' | 'sign-up';
  onDone(): Promise<void> | void;
  mail: MailDelivery;
  sentTo?: string | null;
  onBack?(): void;
}) {
  const { t } = useTranslation('account');
  const id = useId();
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(sentAlready);
  const [start, startState] = useMutation(START_EMAIL_CODE);
  const [verify, verifyState] = useMutation(VERIFY_EMAIL_CODE);
  const [error, setError] = useState<unknown>(null);
  const send = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const result = await start({ variables: { email } });
      setSentTo(result.data?.startEmailCode.email ?? email);
    } catch (caught) {
      setError(caught);
    }
  };
  const check = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await verify({ variables: { email: sentTo ?? email, code } });
      await onDone();
    } catch (caught) {
      setError(caught);
    }
  };
  const errorLine = <ProblemLine error={error} />;
  if (!sentTo) {
    return (
      <form className="form" onSubmit={send} aria-label={t('auth.emailCodeLabel')}>
        <label className="field" htmlFor={`${id}-email`}>
          <span>{t('auth.email')}</span>
          <input id={`${id}-email`} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <p className="muted">{t('auth.emailCodeHint')}</p>
        {errorLine}
        <button type="submit" className="button" disabled={startState.loading}>
          {startState.loading ? t('auth.sending') : t('auth.sendCode')}
        </button>
      </form>
    );
  }
  return (
    <form className="form" onSubmit={check} aria-label={t('auth.enterCodeLabel')}>
      <p data-testid="code-sent">
        <Trans t={t} i18nKey={sentKey(purpose, mail)} values={{ email: sentTo }} components={{ email: <strong />, code: <code /> }} />
      </p>
      <label className="field" htmlFor={`${id}-code`}>
        <span>{t('auth.code')}</span>
        <input
          id={`${id}-code`}
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="[0-9]{6}"
          maxLength={6}
          required
          value={code}
          onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))}
        />
      </label>
      {errorLine}
      <div className="actions">
        <button type="submit" className="button" disabled={verifyState.loading}>
          {verifyState.loading ? t('auth.checking') : purpose === 'sign-up' ? t('auth.confirmSignUp') : t('auth.signIn')}
        </button>
        <button type="button" className="button button--ghost" onClick={() => (onBack ? onBack() : setSentTo(null))}>
          {t('auth.otherEmail')}
        </button>
      </div>
    </form>
  );
}

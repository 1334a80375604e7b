/** `/account`: sign up or sign in; once signed in, API keys and sessions. */
import { useMutation } from '@apollo/client/react';
import { useState } from 'react';
import { Link } from 'react-router';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { SIGN_OUT } from '../graphql/sign-out.mutation.ts';
import { useMe } from '../hooks/use-me.ts';
import { ApiKeysSection } from './api-keys-section.tsx';
import { SessionsSection } from './sessions-section.tsx';
import { SignInPanel } from './sign-in-panel.tsx';
import './account.css';

export function AccountPage() {
  const { me, loading, error, retry, identityChanged } = useMe();
  const [signOut, signOutState] = useMutation(SIGN_OUT);
  const [problem, setProblem] = useState<string | null>(null);
  const leave = async () => {
    setProblem(null);
    try {
      await signOut();
      await identityChanged();
    } catch (caught) {
      setProblem((caught as Error).message);
    }
  };
  return (
    <div className="container page page--narrow">
      <title>Account · svc</title>
      <header className="page-header">
        <h1>Account</h1>
        {me ? (
          <div className="account-summary">
            <p className="lead">
              Signed in as <strong data-testid="account-email">{me.email}</strong>
            </p>
            <p className="muted">
              Plan <span className="badge">{me.planPackage}</span>
              {me.role !== 'member' && (
                <>
                  {' '}
                  · role <span className="badge">{me.role}</span>
                </>
              )}
            </p>
            <p>
              <Link to="/account/usage">See your usage and what each request cost →</Link>
            </p>
            <button type="button" className="button button--ghost" disabled={signOutState.loading} onClick={() => void leave()}>
              {signOutState.loading ? 'Signing out…' : 'Sign out'}
            </button>
            {problem && (
              <p className="form__error" role="alert">
                {problem}
              </p>
            )}
          </div>
        ) : (
          <p className="lead">Create an account or sign in to get API keys and log in the command-line client.</p>
        )}
      </header>
      {error ? (
        <ErrorState title="Your account could not be loaded." error={error} onRetry={retry} retrying={loading} />
      ) : me === undefined ? (
        <LoadingState label="Checking your session…" />
      ) : me === null ? (
        <SignInPanel onSignedIn={identityChanged} />
      ) : (
        <>
          <ApiKeysSection />
          <SessionsSection onSignedOut={identityChanged} />
        </>
      )}
    </div>
  );
}

/**
 * The body of a page that needs an account (usage, billing, checkout, receipts, enterprise): while the
 * session is being checked a loading state, a failed check an error with retry, the signed-out a prompt to
 * sign in, and the signed-in whatever `children` draws for them.
 */
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { AccountFragment } from '../../account/graphql/account.fragment.ts';
import { useMe } from '../../account/hooks/use-me.ts';
import { ErrorState, LoadingState } from './query-state.tsx';

export function SignedIn({
  loadError,
  loadingLabel,
  signedOut,
  children,
}: {
  loadError: string;
  loadingLabel: string;
  signedOut: ReactNode;
  children(me: AccountFragment): ReactNode;
}) {
  const { me, loading, error, retry } = useMe();
  if (error) return <ErrorState title={loadError} error={error} onRetry={retry} retrying={loading} />;
  if (me === undefined) return <LoadingState label={loadingLabel} />;
  if (me === null) return signedOut;
  return children(me);
}

/** "Sign in to …": what the page shows the signed-out, with a button to `/account`. */
export function SignInPrompt({ title, body, action, className }: { title: string; body: string; action: string; className?: string }) {
  return (
    <div className={className ? `state state--empty ${className}` : 'state state--empty'}>
      <p className="state__title">{title}</p>
      <p>{body}</p>
      <Link className="button" to="/account">
        {action}
      </Link>
    </div>
  );
}

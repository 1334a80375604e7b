/** Where the account is signed in (browsers and device-login tokens), with revoke. */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState } from 'react';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { REVOKE_OTHER_SESSIONS } from '../graphql/revoke-other-sessions.mutation.ts';
import { REVOKE_SESSION } from '../graphql/revoke-session.mutation.ts';
import type { SessionFragment } from '../graphql/session.fragment.ts';
import { SESSIONS_QUERY } from '../graphql/sessions.query.ts';
import { formatTime } from './format-time.ts';

function describe(session: SessionFragment): string {
  if (session.kind === 'device') return session.clientName ?? 'Device login';
  return session.userAgent ? browserName(session.userAgent) : 'Browser';
}

function browserName(userAgent: string): string {
  const match = /(Firefox|Edg|Chrome|Chromium|Safari)\/[\d.]+/.exec(userAgent);
  const os = /(Windows|Mac OS X|Android|iPhone|Linux)/.exec(userAgent)?.[1];
  const name = match ? (match[1] === 'Edg' ? 'Edge' : match[1]) : 'Browser';
  return os ? `${name} on ${os.replace('Mac OS X', 'macOS')}` : name!;
}

export function SessionsSection({ onSignedOut }: { onSignedOut(): Promise<void> | void }) {
  const id = useId();
  const { data, loading, error, refetch } = useQuery(SESSIONS_QUERY, { notifyOnNetworkStatusChange: true });
  const [revoke] = useMutation(REVOKE_SESSION);
  const [revokeOthers, othersState] = useMutation(REVOKE_OTHER_SESSIONS);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const end = async (session: SessionFragment) => {
    const question = session.current ? 'Sign out this browser?' : `Sign out "${describe(session)}"? It stops working at once.`;
    if (!window.confirm(question)) return;
    setProblem(null);
    setBusy(session.id);
    try {
      await revoke({ variables: { id: session.id } });
      if (session.current) await onSignedOut();
      else await refetch();
    } catch (caught) {
      setProblem((caught as Error).message);
    } finally {
      setBusy(null);
    }
  };
  const endOthers = async () => {
    if (!window.confirm('Sign out every other browser and device?')) return;
    setProblem(null);
    try {
      await revokeOthers();
      await refetch();
    } catch (caught) {
      setProblem((caught as Error).message);
    }
  };

  const others = data?.sessions.filter((session) => !session.current).length ?? 0;
  return (
    <section className="section" aria-labelledby={`${id}-heading`}>
      <div className="section__head">
        <h2 id={`${id}-heading`}>Sessions</h2>
        <p className="muted">
          Browsers signed in to this account, and command-line logins made by device code (run <code>svc login</code> in a terminal to add one).
        </p>
      </div>
      {problem && (
        <p className="form__error" role="alert">
          {problem}
        </p>
      )}
      {error ? (
        <ErrorState title="Your sessions could not be loaded." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label="Loading sessions…" />
      ) : data.sessions.length === 0 ? (
        <EmptyState title="No sessions." />
      ) : (
        <>
          <div className="table-scroll">
            <table className="data-table">
              <thead>
                <tr>
                  <th scope="col">Where</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Address</th>
                  <th scope="col">Signed in</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.sessions.map((session) => (
                  <tr key={session.id}>
                    <td>
                      {describe(session)} {session.current && <span className="badge">This browser</span>}
                    </td>
                    <td>{session.kind === 'web' ? 'Browser' : 'Device login'}</td>
                    <td>{session.ip ?? '—'}</td>
                    <td>{formatTime(session.createdAt)}</td>
                    <td>{formatTime(session.lastUsedAt)}</td>
                    <td className="data-table__actions">
                      <button type="button" className="button button--ghost" disabled={busy === session.id} onClick={() => void end(session)}>
                        {busy === session.id ? 'Signing out…' : session.current ? 'Sign out' : 'Revoke'}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {others > 0 && (
            <p className="sessions__others">
              <button type="button" className="button button--ghost" disabled={othersState.loading} onClick={() => void endOthers()}>
                Sign out everywhere else ({others})
              </button>
            </p>
          )}
        </>
      )}
    </section>
  );
}

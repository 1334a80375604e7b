/** Where the account is signed in (browsers, device-login tokens, MCP clients connected by OAuth), with revoke. */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { EmptyState, ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { useRowAction } from '../../shell/hooks/use-row-action.ts';
import { REVOKE_OTHER_SESSIONS } from '../graphql/revoke-other-sessions.mutation.ts';
import { REVOKE_SESSION } from '../graphql/revoke-session.mutation.ts';
import type { SessionFragment } from '../graphql/session.fragment.ts';
import { SESSIONS_QUERY } from '../graphql/sessions.query.ts';

/** "Chrome on macOS" from a user agent; browser and system names are product names, the same in every language. */
function useDescribe(): (session: SessionFragment) => string {
  const { t } = useTranslation('account');
  return (session) => {
    if (session.kind === 'device' || session.kind === 'mcp') return session.clientName ?? t(`sessions.kind.${session.kind}`);
    if (!session.userAgent) return t('sessions.kind.web');
    const match = /(Firefox|Edg|Chrome|Chromium|Safari)\/[\d.]+/.exec(session.userAgent);
    const os = /(Windows|Mac OS X|Android|iPhone|Linux)/.exec(session.userAgent)?.[1];
    const browser = match ? (match[1] === 'Edg' ? 'Edge' : match[1]!) : t('sessions.kind.web');
    return os ? t('sessions.browserOn', { browser, os: os.replace('Mac OS X', 'macOS') }) : browser;
  };
}

export function SessionsSection({ onSignedOut }: { onSignedOut(): Promise<void> | void }) {
  const { t } = useTranslation('account');
  const format = useFormat();
  const describe = useDescribe();
  const when = (iso: string | null) => (iso ? format.dateTime(iso) : t('never'));
  const id = useId();
  const { data, loading, error, refetch } = useQuery(SESSIONS_QUERY, { notifyOnNetworkStatusChange: true });
  const [revoke] = useMutation(REVOKE_SESSION);
  const [revokeOthers, othersState] = useMutation(REVOKE_OTHER_SESSIONS);
  const [problem, setProblem] = useState<unknown>(null);
  const [busy, runOnRow] = useRowAction(setProblem);

  const end = (session: SessionFragment) =>
    runOnRow(session.id, session.current ? t('sessions.confirmCurrent') : t('sessions.confirmOther', { name: describe(session) }), async () => {
      await revoke({ variables: { id: session.id } });
      if (session.current) await onSignedOut();
      else await refetch();
    });
  const endOthers = async () => {
    if (!window.confirm(t('sessions.confirmOthers'))) return;
    setProblem(null);
    try {
      await revokeOthers();
      await refetch();
    } catch (caught) {
      setProblem(caught);
    }
  };

  const others = data?.sessions.filter((session) => !session.current).length ?? 0;
  return (
    <section className="section" aria-labelledby={`${id}-heading`}>
      <div className="section__head">
        <h2 id={`${id}-heading`}>{t('sessions.heading')}</h2>
        <p className="muted">
          <Trans t={t} i18nKey="sessions.intro" components={{ code: <code /> }} />
        </p>
      </div>
      <ProblemLine error={problem} />
      {error ? (
        <ErrorState title={t('sessions.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('sessions.loading')} />
      ) : data.sessions.length === 0 ? (
        <EmptyState title={t('sessions.empty')} />
      ) : (
        <>
          <div className="table-scroll">
            <table className="data-table">
              <thead>
                <tr>
                  <th scope="col">{t('sessions.columns.where')}</th>
                  <th scope="col">{t('sessions.columns.kind')}</th>
                  <th scope="col">{t('sessions.columns.address')}</th>
                  <th scope="col">{t('sessions.columns.signedIn')}</th>
                  <th scope="col">{t('sessions.columns.lastUsed')}</th>
                  <th scope="col">
                    <span className="visually-hidden">{t('sessions.columns.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.sessions.map((session) => (
                  <tr key={session.id}>
                    <td>
                      {describe(session)} {session.current && <span className="badge">{t('sessions.thisBrowser')}</span>}
                    </td>
                    <td>{t(`sessions.kind.${session.kind}`)}</td>
                    <td>{session.ip ?? '—'}</td>
                    <td>{when(session.createdAt)}</td>
                    <td>{when(session.lastUsedAt)}</td>
                    <td className="data-table__actions">
                      <button type="button" className="button button--ghost" disabled={busy === session.id} onClick={() => void end(session)}>
                        {busy === session.id ? t('sessions.signingOut') : session.current ? t('sessions.signOut') : t('sessions.revoke')}
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
                {t('sessions.signOutOthers', { count: others })}
              </button>
            </p>
          )}
        </>
      )}
    </section>
  );
}

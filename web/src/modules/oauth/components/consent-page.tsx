/**
 * `/oauth/consent?request=…`: an MCP client (Claude Code, Codex, Cursor…) asks, by OAuth, to use svc's
 * hosted tools for the member's account. Shows the client's name as it gave it, the host the browser goes
 * back to, what the access allows and who is signed in; signs the member in first if needed; acts only on an
 * explicit Approve or Deny, then sends the browser back to the client. `?error=…` explains a request svc
 * would not send back to the client (an unknown client, an unregistered return address).
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { SignInPanel } from '../../account/components/sign-in-panel.tsx';
import { useMe } from '../../account/hooks/use-me.ts';
import { ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { APPROVE_OAUTH_AUTHORIZATION, type OAuthDecision } from '../graphql/approve-oauth-authorization.mutation.ts';
import { DENY_OAUTH_AUTHORIZATION } from '../graphql/deny-oauth-authorization.mutation.ts';
import { OAUTH_AUTHORIZATION_REQUEST_QUERY } from '../graphql/oauth-authorization-request.query.ts';
import '../../account/components/account.css';

const pageErrors = ['unknown_client', 'invalid_redirect_uri'] as const;
type PageError = (typeof pageErrors)[number];

export function ConsentPage() {
  const { t } = useTranslation(['oauth', 'shell']);
  const [params] = useSearchParams();
  const requestId = params.get('request')?.trim() ?? '';
  const error = params.get('error');
  const { me, loading, error: meError, retry, identityChanged } = useMe();
  return (
    <div className="container page page--narrow">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header">
        <h1>{t('title')}</h1>
        <p className="lead">{t('lead')}</p>
      </header>
      {isPageError(error) ? (
        <p className="device-card" role="alert" data-testid="oauth-error">
          {t(`errors.${error}`)}
        </p>
      ) : !requestId ? (
        <p>{t('noRequest')}</p>
      ) : meError ? (
        <ErrorState title={t('sessionError')} error={meError} onRetry={retry} retrying={loading} />
      ) : me === undefined ? (
        <LoadingState label={t('checkingSession')} />
      ) : me === null ? (
        <>
          <p>{t('signInFirst')}</p>
          <SignInPanel onSignedIn={identityChanged} returnTo={`/oauth/consent?request=${encodeURIComponent(requestId)}`} />
        </>
      ) : (
        <Review requestId={requestId} email={me.email} />
      )}
    </div>
  );
}

function isPageError(value: string | null): value is PageError {
  return pageErrors.includes(value as PageError);
}

function Review({ requestId, email }: { requestId: string; email: string }) {
  const { t } = useTranslation('oauth');
  const { data, loading, error, refetch } = useQuery(OAUTH_AUTHORIZATION_REQUEST_QUERY, { variables: { id: requestId }, fetchPolicy: 'network-only' });
  const [approve, approveState] = useMutation(APPROVE_OAUTH_AUTHORIZATION);
  const [deny, denyState] = useMutation(DENY_OAUTH_AUTHORIZATION);
  const [decided, setDecided] = useState<OAuthDecision | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const decide = async (decision: 'approve' | 'deny') => {
    setProblem(null);
    try {
      const result = decision === 'approve' ? (await approve({ variables: { id: requestId } })).data?.approveOAuthAuthorization : (await deny({ variables: { id: requestId } })).data?.denyOAuthAuthorization;
      if (!result) return;
      setDecided(result);
      // Back to the client (its loopback listener or app scheme), which finishes signing in.
      window.location.assign(result.redirectTo);
    } catch (caught) {
      setProblem(caught);
    }
  };
  if (error) return <ErrorState title={t('review.cannotUse')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('review.lookingUp')} />;
  const request = decided?.request ?? data.oauthAuthorizationRequest;
  const busy = approveState.loading || denyState.loading || decided !== null;
  return (
    <div className="device-card" data-testid="oauth-card">
      <p className="muted">{t('review.client')}</p>
      <p className="device-card__client" data-testid="oauth-client">
        {request.clientName}
      </p>
      {request.clientUri && (
        <p>
          <a href={request.clientUri} rel="noopener noreferrer nofollow" target="_blank">
            {t('review.website')}
          </a>
        </p>
      )}
      <p className="muted">{t('review.returnsTo')}</p>
      <p data-testid="oauth-redirect-host">
        <strong>{request.redirectHost}</strong>
      </p>
      <p className="muted">{t('review.access')}</p>
      <p>
        <Trans t={t} i18nKey="review.scope" components={{ code: <code /> }} />
      </p>
      <p className="muted">{t('review.signedInAs', { email })}</p>
      {request.state === 'pending' && !decided ? (
        <div className="actions">
          <button type="button" className="button" disabled={busy} onClick={() => void decide('approve')}>
            {approveState.loading ? t('review.approving') : t('review.approve')}
          </button>
          <button type="button" className="button button--ghost" disabled={busy} onClick={() => void decide('deny')}>
            {denyState.loading ? t('review.denying') : t('review.deny')}
          </button>
        </div>
      ) : (
        <p className={`device-card__outcome device-card__outcome--${request.state}`} role="status" data-testid="oauth-outcome">
          {decided ? t('review.returning', { host: request.redirectHost }) : request.state === 'approved' ? t('review.approved') : request.state === 'denied' ? t('review.denied') : t('review.expired')}
        </p>
      )}
      <ProblemLine error={problem} />
    </div>
  );
}

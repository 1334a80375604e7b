/**
 * `/device?user_code=…`: approve a command-line login. Shows the client name and the code so the member
 * can compare it with the terminal, signs the member in first if needed, and acts only on an explicit
 * Approve or Deny. Opening the code claims it for this browser session.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { SignInPanel } from '../../account/components/sign-in-panel.tsx';
import { useMe } from '../../account/hooks/use-me.ts';
import { ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { APPROVE_DEVICE } from '../graphql/approve-device.mutation.ts';
import { DENY_DEVICE } from '../graphql/deny-device.mutation.ts';
import type { DeviceAuthorizationFragment } from '../graphql/device-authorization.fragment.ts';
import { DEVICE_AUTHORIZATION_QUERY } from '../graphql/device-authorization.query.ts';
import '../../account/components/account.css';

export function DevicePage() {
  const { t } = useTranslation(['device', 'shell']);
  const [params, setParams] = useSearchParams();
  const userCode = params.get('user_code')?.trim() ?? '';
  const { me, loading, error, retry, identityChanged } = useMe();
  const returnTo = `/device${userCode ? `?user_code=${encodeURIComponent(userCode)}` : ''}`;
  return (
    <div className="container page page--narrow">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header">
        <h1>{t('title')}</h1>
        <p className="lead">{t('lead')}</p>
      </header>
      {error ? (
        <ErrorState title={t('sessionError')} error={error} onRetry={retry} retrying={loading} />
      ) : me === undefined ? (
        <LoadingState label={t('checkingSession')} />
      ) : me === null ? (
        <>
          <p>
            {userCode ? (
              <Trans t={t} i18nKey="signInFirstToReview" values={{ code: userCode.toUpperCase() }} components={{ code: <strong className="device-code-inline" /> }} />
            ) : (
              t('signInFirst')
            )}
          </p>
          <SignInPanel onSignedIn={identityChanged} returnTo={returnTo} />
        </>
      ) : !userCode ? (
        <CodeEntry onCode={(code) => setParams({ user_code: code })} />
      ) : (
        <Review userCode={userCode} email={me.email} onOtherCode={() => setParams({})} />
      )}
    </div>
  );
}

function CodeEntry({ onCode }: { onCode(code: string): void }) {
  const { t } = useTranslation('device');
  const id = useId();
  const [code, setCode] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onCode(code.trim().toUpperCase());
  };
  return (
    <form className="form device-card" onSubmit={submit} aria-label={t('entry.label')}>
      <label className="field" htmlFor={`${id}-code`}>
        <span>{t('entry.code')}</span>
        <input id={`${id}-code`} required autoComplete="off" placeholder="BCDF-GHJK" value={code} onChange={(e) => setCode(e.target.value)} />
      </label>
      <button type="submit" className="button">
        {t('entry.continue')}
      </button>
    </form>
  );
}

function Review({ userCode, email, onOtherCode }: { userCode: string; email: string; onOtherCode(): void }) {
  const { t } = useTranslation('device');
  const { data, loading, error, refetch } = useQuery(DEVICE_AUTHORIZATION_QUERY, { variables: { userCode }, fetchPolicy: 'network-only' });
  const [approve, approveState] = useMutation(APPROVE_DEVICE);
  const [deny, denyState] = useMutation(DENY_DEVICE);
  const [decided, setDecided] = useState<DeviceAuthorizationFragment | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const decide = async (decision: 'approve' | 'deny') => {
    setProblem(null);
    try {
      const result = decision === 'approve' ? (await approve({ variables: { userCode } })).data?.approveDevice : (await deny({ variables: { userCode } })).data?.denyDevice;
      setDecided(result ?? null);
    } catch (caught) {
      setProblem(caught);
    }
  };
  if (error) {
    return (
      <div className="device-card">
        <ErrorState title={t('review.cannotUse')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
        <button type="button" className="button button--ghost" onClick={onOtherCode}>
          {t('review.otherCode')}
        </button>
      </div>
    );
  }
  if (!data) return <LoadingState label={t('review.lookingUp')} />;
  const device = decided ?? data.deviceAuthorization;
  return (
    <div className="device-card" data-testid="device-card">
      <p className="muted">{t('review.client')}</p>
      <p className="device-card__client" data-testid="device-client">
        {device.clientName}
      </p>
      <p className="muted">{t('review.code')}</p>
      <p className="device-card__code" data-testid="device-code">
        {device.userCode}
      </p>
      <p className="muted">{t('review.signsInAs', { email })}</p>
      {device.state === 'pending' ? (
        <div className="actions">
          <button type="button" className="button" disabled={approveState.loading || denyState.loading} onClick={() => void decide('approve')}>
            {approveState.loading ? t('review.approving') : t('review.approve')}
          </button>
          <button type="button" className="button button--ghost" disabled={approveState.loading || denyState.loading} onClick={() => void decide('deny')}>
            {denyState.loading ? t('review.denying') : t('review.deny')}
          </button>
        </div>
      ) : (
        <p className={`device-card__outcome device-card__outcome--${device.state}`} role="status">
          {device.state === 'approved' ? t('review.approved') : device.state === 'denied' ? t('review.denied') : t('review.expired')}
        </p>
      )}
      <ProblemLine error={problem} />
    </div>
  );
}

/**
 * `/device?user_code=…`: approve a command-line login. Shows the client name and the code so the member
 * can compare it with the terminal, signs the member in first if needed, and acts only on an explicit
 * Approve or Deny. Opening the code claims it for this browser session.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { SignInPanel } from '../../account/components/sign-in-panel.tsx';
import { useMe } from '../../account/hooks/use-me.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { APPROVE_DEVICE } from '../graphql/approve-device.mutation.ts';
import { DENY_DEVICE } from '../graphql/deny-device.mutation.ts';
import type { DeviceAuthorizationFragment } from '../graphql/device-authorization.fragment.ts';
import { DEVICE_AUTHORIZATION_QUERY } from '../graphql/device-authorization.query.ts';
import '../../account/components/account.css';

export function DevicePage() {
  const [params, setParams] = useSearchParams();
  const userCode = params.get('user_code')?.trim() ?? '';
  const { me, loading, error, retry, identityChanged } = useMe();
  const returnTo = `/device${userCode ? `?user_code=${encodeURIComponent(userCode)}` : ''}`;
  return (
    <div className="container page page--narrow">
      <title>Approve a device · svc</title>
      <header className="page-header">
        <h1>Approve a device</h1>
        <p className="lead">A command-line client asked to sign in to your account. Approve it only if you started that login yourself.</p>
      </header>
      {error ? (
        <ErrorState title="Your session could not be checked." error={error} onRetry={retry} retrying={loading} />
      ) : me === undefined ? (
        <LoadingState label="Checking your session…" />
      ) : me === null ? (
        <>
          <p>Sign in first{userCode && <> to review the code <strong className="device-code-inline">{userCode.toUpperCase()}</strong></>}.</p>
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
  const id = useId();
  const [code, setCode] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onCode(code.trim().toUpperCase());
  };
  return (
    <form className="form device-card" onSubmit={submit} aria-label="Enter the device code">
      <label className="field" htmlFor={`${id}-code`}>
        <span>Code shown by your device</span>
        <input id={`${id}-code`} required autoComplete="off" placeholder="BCDF-GHJK" value={code} onChange={(e) => setCode(e.target.value)} />
      </label>
      <button type="submit" className="button">
        Continue
      </button>
    </form>
  );
}

function Review({ userCode, email, onOtherCode }: { userCode: string; email: string; onOtherCode(): void }) {
  const { data, loading, error, refetch } = useQuery(DEVICE_AUTHORIZATION_QUERY, { variables: { userCode }, fetchPolicy: 'network-only' });
  const [approve, approveState] = useMutation(APPROVE_DEVICE);
  const [deny, denyState] = useMutation(DENY_DEVICE);
  const [decided, setDecided] = useState<DeviceAuthorizationFragment | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const decide = async (decision: 'approve' | 'deny') => {
    setProblem(null);
    try {
      const result = decision === 'approve' ? (await approve({ variables: { userCode } })).data?.approveDevice : (await deny({ variables: { userCode } })).data?.denyDevice;
      setDecided(result ?? null);
    } catch (caught) {
      setProblem((caught as Error).message);
    }
  };
  if (error) {
    return (
      <div className="device-card">
        <ErrorState title="This code cannot be used." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
        <button type="button" className="button button--ghost" onClick={onOtherCode}>
          Enter another code
        </button>
      </div>
    );
  }
  if (!data) return <LoadingState label="Looking up the code…" />;
  const device = decided ?? data.deviceAuthorization;
  return (
    <div className="device-card" data-testid="device-card">
      <p className="muted">Client</p>
      <p className="device-card__client" data-testid="device-client">
        {device.clientName}
      </p>
      <p className="muted">Code — check that your terminal shows the same</p>
      <p className="device-card__code" data-testid="device-code">
        {device.userCode}
      </p>
      <p className="muted">It will sign in as {email}.</p>
      {device.state === 'pending' ? (
        <div className="actions">
          <button type="button" className="button" disabled={approveState.loading || denyState.loading} onClick={() => void decide('approve')}>
            {approveState.loading ? 'Approving…' : 'Approve'}
          </button>
          <button type="button" className="button button--ghost" disabled={approveState.loading || denyState.loading} onClick={() => void decide('deny')}>
            {denyState.loading ? 'Denying…' : 'Deny'}
          </button>
        </div>
      ) : (
        <p className={`device-card__outcome device-card__outcome--${device.state}`} role="status">
          {device.state === 'approved'
            ? 'Approved. You can close this page; the device finishes signing in on its own.'
            : device.state === 'denied'
              ? 'Denied. The device was told so.'
              : 'This code has expired. Start the login again on your device.'}
        </p>
      )}
      {problem && (
        <p className="form__error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

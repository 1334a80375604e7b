/** `/account`: sign up or sign in; once signed in, API keys and sessions. */
import { useMutation } from '@apollo/client/react';
import { useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { AccountPlanSection } from '../../billing/components/account-plan-section.tsx';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import { ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { SIGN_OUT } from '../graphql/sign-out.mutation.ts';
import { useMe } from '../hooks/use-me.ts';
import { ApiKeysSection } from './api-keys-section.tsx';
import { SessionsSection } from './sessions-section.tsx';
import { SignInPanel } from './sign-in-panel.tsx';
import './account.css';

export function AccountPage() {
  const { t } = useTranslation(['account', 'shell']);
  const { me, loading, error, retry, identityChanged } = useMe();
  const packageName = usePackageName();
  const [signOut, signOutState] = useMutation(SIGN_OUT);
  const [problem, setProblem] = useState<unknown>(null);
  const leave = async () => {
    setProblem(null);
    try {
      await signOut();
      await identityChanged();
    } catch (caught) {
      setProblem(caught);
    }
  };
  const badge = <span className="badge" />;
  return (
    <div className="container page page--narrow">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header">
        <h1>{t('title')}</h1>
        {me ? (
          <div className="account-summary">
            <p className="lead">
              <Trans t={t} i18nKey="signedInAs" values={{ email: me.email }} components={{ email: <strong data-testid="account-email" /> }} />
            </p>
            <p className="muted">
              {me.role === 'member' ? (
                <Trans t={t} i18nKey="plan" values={{ plan: packageName(me.planPackage) }} components={{ badge }} />
              ) : (
                <Trans t={t} i18nKey="planAndRole" values={{ plan: packageName(me.planPackage), role: t(`role.${me.role}`) }} components={{ badge }} />
              )}
            </p>
            <p>
              <Link to="/account/usage">{t('usageLink')}</Link> · <Link to="/account/credits">{t('creditsLink')}</Link>
            </p>
            <button type="button" className="button button--ghost" disabled={signOutState.loading} onClick={() => void leave()}>
              {signOutState.loading ? t('signingOut') : t('signOut')}
            </button>
            <ProblemLine error={problem} />
          </div>
        ) : (
          <p className="lead">{t('intro')}</p>
        )}
      </header>
      {error ? (
        <ErrorState title={t('loadError')} error={error} onRetry={retry} retrying={loading} />
      ) : me === undefined ? (
        <LoadingState label={t('checkingSession')} />
      ) : me === null ? (
        <SignInPanel onSignedIn={identityChanged} />
      ) : (
        <>
          <AccountPlanSection packageId={me.planPackage} />
          <ApiKeysSection />
          <SessionsSection onSignedOut={identityChanged} />
        </>
      )}
    </div>
  );
}

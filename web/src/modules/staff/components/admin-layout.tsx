/**
 * The admin app's frame (`/admin/*`): its own header and navigation, shown only to staff. Signed out: a
 * sign-in form right here; signed in without a staff role: a plain "staff only" page. What each page may
 * do is decided again by the server on every request; `viewerCan…` only decides what is shown. The
 * language follows the staff member's account, with the same switch as the site's header. Above every page,
 * a banner says when chat has no model server to answer it; without a mail server, the navigation gains
 * the development outbox.
 */
import { useApolloClient, useQuery } from '@apollo/client/react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, NavLink, Outlet, ScrollRestoration } from 'react-router';
import { SignInPanel } from '../../account/components/sign-in-panel.tsx';
import { AUTH_PROVIDERS_QUERY } from '../../account/graphql/auth-providers.query.ts';
import { useAccountLanguage } from '../../account/hooks/use-language.ts';
import { LanguageSwitch } from '../../shell/components/language-switch.tsx';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { STAFF_VIEWER_QUERY, type StaffViewer } from '../graphql/staff-viewer.query.ts';
import { UpstreamBanner } from './upstream-banner.tsx';
import { useLiveReviewQueue } from '../hooks/use-review-queue.ts';
import '../../account/components/account.css';
import './admin.css';

const navigation = [
  { to: '/admin', label: 'dashboard', end: true },
  { to: '/admin/applications', label: 'applications', end: false },
  { to: '/admin/accounts', label: 'accounts', end: false },
  { to: '/admin/audit', label: 'audit', end: false },
  { to: '/admin/orders', label: 'orders', end: false },
  { to: '/admin/credit-codes', label: 'creditCodes', end: false },
  // Only while mail stays on this server (no SMTP, not production): see `outbox` below.
  { to: '/admin/outbox', label: 'outbox', end: false },
] as const;

/** How many applications wait for review, live; nothing when none wait. */
function PendingCount({ enabled }: { enabled: boolean }) {
  const { t } = useTranslation('staff');
  const queue = useLiveReviewQueue(enabled);
  if (!queue || queue.pending === 0) return null;
  return (
    <span className="admin-nav__count" data-testid="pending-count">
      <span aria-hidden="true">{queue.pending}</span>
      <span className="visually-hidden">{t('layout.nav.pending', { count: queue.pending })}</span>
    </span>
  );
}

export function isStaff(viewer: StaffViewer): boolean {
  return viewer.viewerCanManageAccounts || viewer.viewerCanReadAuditLog || viewer.viewerCanReviewApplications;
}

export function AdminLayout() {
  const { t } = useTranslation('staff');
  useAccountLanguage();
  const client = useApolloClient();
  const { data, loading, error, refetch } = useQuery(STAFF_VIEWER_QUERY, { notifyOnNetworkStatusChange: true });
  const viewer = data?.me;
  const staff = viewer ? isStaff(viewer) : false;
  const outbox = useQuery(AUTH_PROVIDERS_QUERY, { skip: !staff }).data?.authProviders.mailDelivery === 'outbox';
  return (
    <div className="admin">
      <a className="skip-link" href="#admin-main">
        {t('layout.skipToContent')}
      </a>
      <header className="admin-bar">
        <div className="admin-bar__inner">
          <Link to={staff ? '/admin' : '/'} className="brand admin-brand" aria-label={t('layout.home')}>
            <span className="brand__mark" aria-hidden="true" />
            svc <span className="admin-brand__tag">{t('layout.tag')}</span>
          </Link>
          {staff && (
            <nav aria-label={t('layout.nav.label')} className="admin-nav">
              {navigation.filter((item) => outbox || item.label !== 'outbox').map((item) => (
                <NavLink key={item.to} to={item.to} end={item.end} className="admin-nav__link">
                  {t(`layout.nav.${item.label}`)}
                  {item.label === 'applications' && <PendingCount enabled={viewer?.viewerCanReviewApplications ?? false} />}
                </NavLink>
              ))}
            </nav>
          )}
          <div className="admin-bar__viewer">
            {viewer && (
              <>
                <span className="admin-bar__email" title={viewer.email}>
                  {viewer.email}
                </span>
                <span className={`role role--${viewer.role}`}>{t(`role.${viewer.role}`)}</span>
              </>
            )}
            <Link to="/" className="admin-bar__site">
              {t('layout.backToSite')}
            </Link>
            <LanguageSwitch />
          </div>
        </div>
      </header>
      <main id="admin-main" className="admin-main">
        {error ? (
          <div className="admin-page">
            <ErrorState title={t('layout.checkError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
          </div>
        ) : viewer === undefined ? (
          <div className="admin-page">
            <LoadingState label={t('layout.checking')} />
          </div>
        ) : viewer === null ? (
          <div className="admin-page admin-gate">
            <title>{t('pageTitle', { page: t('layout.signIn.title') })}</title>
            <h1>{t('layout.signIn.heading')}</h1>
            <p className="muted">{t('layout.signIn.body')}</p>
            <SignInPanel onSignedIn={async () => void (await client.resetStore())} returnTo="/admin" signUp={false} />
          </div>
        ) : !staff ? (
          <div className="admin-page admin-gate">
            <title>{t('pageTitle', { page: t('layout.staffOnly.title') })}</title>
            <h1>{t('layout.staffOnly.heading')}</h1>
            <p>
              <Trans t={t} i18nKey="layout.staffOnly.body" values={{ email: viewer.email }} components={{ strong: <strong /> }} />
            </p>
            <p className="muted">{t('layout.staffOnly.ask')}</p>
            <div className="actions">
              <Link className="button" to="/account">
                {t('layout.staffOnly.account')}
              </Link>
            </div>
          </div>
        ) : (
          <>
            <UpstreamBanner />
            <Outlet context={{ viewer }} />
          </>
        )}
      </main>
      <ScrollRestoration />
    </div>
  );
}

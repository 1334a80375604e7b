/**
 * The admin app's frame (`/admin/*`): its own header and navigation, shown only to staff. Signed out: a
 * sign-in form right here; signed in without a staff role: a plain "staff only" page. What each page may
 * do is decided again by the server on every request; `viewerCan…` only decides what is shown.
 */
import { useApolloClient, useQuery } from '@apollo/client/react';
import { Link, NavLink, Outlet, ScrollRestoration } from 'react-router';
import { SignInPanel } from '../../account/components/sign-in-panel.tsx';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { STAFF_VIEWER_QUERY, type StaffViewer } from '../graphql/staff-viewer.query.ts';
import '../../account/components/account.css';
import './admin.css';

const navigation = [
  { to: '/admin', label: 'Dashboard', end: true },
  { to: '/admin/applications', label: 'Applications', end: false },
  { to: '/admin/accounts', label: 'Accounts', end: false },
  { to: '/admin/audit', label: 'Audit log', end: false },
];

export function isStaff(viewer: StaffViewer): boolean {
  return viewer.viewerCanManageAccounts || viewer.viewerCanReadAuditLog || viewer.viewerCanReviewApplications;
}

export function AdminLayout() {
  const client = useApolloClient();
  const { data, loading, error, refetch } = useQuery(STAFF_VIEWER_QUERY, { notifyOnNetworkStatusChange: true });
  const viewer = data?.me;
  const staff = viewer ? isStaff(viewer) : false;
  return (
    <div className="admin">
      <a className="skip-link" href="#admin-main">
        Skip to content
      </a>
      <header className="admin-bar">
        <div className="admin-bar__inner">
          <Link to={staff ? '/admin' : '/'} className="brand admin-brand" aria-label="svc admin home">
            <span className="brand__mark" aria-hidden="true" />
            svc <span className="admin-brand__tag">admin</span>
          </Link>
          {staff && (
            <nav aria-label="Admin" className="admin-nav">
              {navigation.map((item) => (
                <NavLink key={item.to} to={item.to} end={item.end} className="admin-nav__link">
                  {item.label}
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
                <span className={`role role--${viewer.role}`}>{viewer.role}</span>
              </>
            )}
            <Link to="/" className="admin-bar__site">
              Back to the site
            </Link>
          </div>
        </div>
      </header>
      <main id="admin-main" className="admin-main">
        {error ? (
          <div className="admin-page">
            <ErrorState title="Your session could not be checked." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
          </div>
        ) : viewer === undefined ? (
          <div className="admin-page">
            <LoadingState label="Checking your session…" />
          </div>
        ) : viewer === null ? (
          <div className="admin-page admin-gate">
            <title>Sign in · svc admin</title>
            <h1>Sign in to the admin app</h1>
            <p className="muted">The admin app is for svc support staff and admins. Sign in with your staff account.</p>
            <SignInPanel onSignedIn={async () => void (await client.resetStore())} returnTo="/admin" signUp={false} />
          </div>
        ) : !staff ? (
          <div className="admin-page admin-gate">
            <title>Staff only · svc admin</title>
            <h1>Staff only</h1>
            <p>
              You are signed in as <strong>{viewer.email}</strong>, a member account. The admin app is for svc support staff and admins, so there is
              nothing here for you.
            </p>
            <p className="muted">If you work on svc support and need access, ask an admin to give your account the support role.</p>
            <div className="actions">
              <Link className="button" to="/account">
                Go to your account
              </Link>
            </div>
          </div>
        ) : (
          <Outlet context={{ viewer }} />
        )}
      </main>
      <ScrollRestoration />
    </div>
  );
}

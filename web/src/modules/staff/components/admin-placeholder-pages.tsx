/** The admin app's stand-ins: an unknown `/admin/…` path, and the review queue until the enterprise module brings it. */
import { Link } from 'react-router';

export function AdminNotFoundPage() {
  return (
    <div className="admin-page">
      <title>Not found · svc admin</title>
      <div className="state state--empty">
        <p className="state__title">There is no admin page at this address.</p>
        <p>
          Go to the <Link to="/admin">dashboard</Link>, <Link to="/admin/accounts">accounts</Link> or the <Link to="/admin/audit">audit log</Link>.
        </p>
      </div>
    </div>
  );
}

/** Replaced by the enterprise module's `/admin/applications` and `/admin/applications/:id` pages. */
export function ApplicationsPlaceholderPage() {
  return (
    <div className="admin-page">
      <title>Applications · svc admin</title>
      <header className="admin-head">
        <h1>Applications</h1>
      </header>
      <div className="state state--empty">
        <p className="state__title">The review queue is not part of this build yet.</p>
        <p>Enterprise applications waiting for review will be listed here, oldest first.</p>
      </div>
    </div>
  );
}

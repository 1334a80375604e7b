import { Link, useLocation } from 'react-router';

export function NotFoundPage() {
  const { pathname } = useLocation();
  return (
    <section className="container page page--narrow">
      <title>Page not found · svc</title>
      <p className="eyebrow">404</p>
      <h1>Page not found</h1>
      <p className="lead">
        There is no page at <code>{pathname}</code>.
      </p>
      <div className="actions">
        <Link to="/" className="button">
          Go to the home page
        </Link>
        <Link to="/pricing" className="button button--ghost">
          See pricing
        </Link>
      </div>
    </section>
  );
}

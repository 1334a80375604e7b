import { isRouteErrorResponse, Link, useRouteError } from 'react-router';

/** Shown inside the shell when a page throws while rendering, instead of a blank screen. */
export function RouteErrorPage() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error)
    ? `${error.status} ${error.statusText}`
    : error instanceof Error
      ? error.message
      : String(error);
  return (
    <section className="container page page--narrow">
      <title>Something went wrong · svc</title>
      <div className="state state--error" role="alert">
        <p className="state__title">This page failed to render.</p>
        <p className="state__message">{message}</p>
        <div className="actions">
          <button type="button" className="button" onClick={() => window.location.reload()}>
            Reload the page
          </button>
          <Link to="/" className="button button--ghost">
            Go to the home page
          </Link>
        </div>
      </div>
    </section>
  );
}

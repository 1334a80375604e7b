import { useTranslation } from 'react-i18next';
import { isRouteErrorResponse, Link, useRouteError } from 'react-router';

/** Shown inside the shell when a page throws while rendering, instead of a blank screen. */
export function RouteErrorPage() {
  const { t } = useTranslation('shell');
  const error = useRouteError();
  const message = isRouteErrorResponse(error)
    ? `${error.status} ${error.statusText}`
    : error instanceof Error
      ? error.message
      : String(error);
  return (
    <section className="container page page--narrow">
      <title>{t('pageTitle', { page: t('routeError.title') })}</title>
      <div className="state state--error" role="alert">
        <p className="state__title">{t('routeError.heading')}</p>
        <p className="state__message">{message}</p>
        <div className="actions">
          <button type="button" className="button" onClick={() => window.location.reload()}>
            {t('routeError.reload')}
          </button>
          <Link to="/" className="button button--ghost">
            {t('routeError.home')}
          </Link>
        </div>
      </div>
    </section>
  );
}

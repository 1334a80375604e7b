import { Trans, useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router';

export function NotFoundPage() {
  const { t } = useTranslation('shell');
  const { pathname } = useLocation();
  return (
    <section className="container page page--narrow">
      <title>{t('pageTitle', { page: t('notFound.title') })}</title>
      <p className="eyebrow">404</p>
      <h1>{t('notFound.title')}</h1>
      <p className="lead">
        <Trans t={t} i18nKey="notFound.lead" values={{ path: pathname }} components={{ code: <code /> }} />
      </p>
      <div className="actions">
        <Link to="/" className="button">
          {t('notFound.home')}
        </Link>
        <Link to="/pricing" className="button button--ghost">
          {t('notFound.pricing')}
        </Link>
      </div>
    </section>
  );
}

import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

export interface NotAvailablePageProps {
  /** Which page this stands in for; its title and what it will do are in the `shell` catalogue. */
  page: 'enterprise';
}

/** Stands in, truthfully, for a page this build of the web app does not have yet. */
export function NotAvailablePage({ page }: NotAvailablePageProps) {
  const { t } = useTranslation('shell');
  const title = t(`notAvailable.${page}.title`);
  return (
    <section className="container page page--narrow">
      <title>{t('pageTitle', { page: title })}</title>
      <p className="eyebrow">{t('notAvailable.eyebrow')}</p>
      <h1>{title}</h1>
      <p className="lead">{t(`notAvailable.${page}.lead`)}</p>
      <div className="actions">
        <Link to="/pricing" className="button">
          {t('notAvailable.pricing')}
        </Link>
        <Link to="/docs" className="button button--ghost">
          {t('notAvailable.docs')}
        </Link>
      </div>
    </section>
  );
}

/** The admin app's stand-ins: an unknown `/admin/…` path, and the review queue until the enterprise module brings it. */
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';

export function AdminNotFoundPage() {
  const { t } = useTranslation('staff');
  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('notFound.title') })}</title>
      <div className="state state--empty">
        <p className="state__title">{t('notFound.heading')}</p>
        <p>
          <Trans
            t={t}
            i18nKey="notFound.links"
            components={{ dashboard: <Link to="/admin" />, accounts: <Link to="/admin/accounts" />, audit: <Link to="/admin/audit" /> }}
          />
        </p>
      </div>
    </div>
  );
}

/** Replaced by the enterprise module's `/admin/applications` and `/admin/applications/:id` pages. */
export function ApplicationsPlaceholderPage() {
  const { t } = useTranslation('staff');
  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('applications.title') })}</title>
      <header className="admin-head">
        <h1>{t('applications.title')}</h1>
      </header>
      <div className="state state--empty">
        <p className="state__title">{t('applications.empty')}</p>
        <p>{t('applications.emptyHint')}</p>
      </div>
    </div>
  );
}

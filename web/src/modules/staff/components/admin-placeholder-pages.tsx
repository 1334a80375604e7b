/** The admin app's stand-in for an unknown `/admin/…` path. */
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';

export function AdminNotFoundPage() {
  const { t } = useTranslation('staff');
  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('notFound.title') })}</title>
      <div className="state state--empty">
        <h1 className="state__title">{t('notFound.heading')}</h1>
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

import { Trans, useTranslation } from 'react-i18next';
import { Link, NavLink, Outlet, ScrollRestoration } from 'react-router';
import { useAccountLanguage } from '../../account/hooks/use-language.ts';
import { useMe } from '../../account/hooks/use-me.ts';
import { NoticeBell } from '../../alerts/components/notice-bell.tsx';
import { LanguageSwitch } from './language-switch.tsx';

/** Header, page body and footer around every page. */
export function AppShell() {
  const { t } = useTranslation('shell');
  useAccountLanguage();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        {t('skipToContent')}
      </a>
      <header className="site-header">
        <div className="container site-header__inner">
          <Link to="/" className="brand" aria-label={t('brandHome')}>
            <span className="brand__mark" aria-hidden="true" />
            svc
          </Link>
          <MainNav />
          <LanguageSwitch />
        </div>
      </header>
      <main id="main" className="site-main">
        <Outlet />
      </main>
      <SiteFooter />
      <ScrollRestoration />
    </div>
  );
}

function MainNav() {
  const { t } = useTranslation('shell');
  const { me } = useMe();
  // Signed-in members get their usage one click away; `end` keeps Account unhighlighted on /account/usage.
  const items = [
    { to: '/pricing', label: t('nav.pricing') },
    { to: '/docs', label: t('nav.docs') },
    ...(me ? [{ to: '/account/usage', label: t('nav.usage') }] : []),
    ...(me ? [{ to: '/enterprise', label: t('nav.enterprise') }] : []),
    { to: '/account', label: t('nav.account') },
  ];
  return (
    <nav aria-label={t('nav.label')} className="site-nav">
      {items.map((item) => (
        <NavLink key={item.to} to={item.to} end={item.to === '/account'} className="site-nav__link">
          {item.label}
        </NavLink>
      ))}
      {me && <NoticeBell />}
    </nav>
  );
}

function SiteFooter() {
  const { t } = useTranslation('shell');
  const apiBase = `${window.location.origin}/v1`;
  return (
    <footer className="site-footer">
      <div className="container site-footer__inner">
        <p>
          <Trans t={t} i18nKey="footer.tagline" components={{ strong: <strong /> }} />
        </p>
        <p>
          <Trans t={t} i18nKey="footer.apiBase" values={{ url: apiBase }} components={{ code: <code /> }} />
        </p>
        <nav aria-label={t('footer.label')} className="site-footer__links">
          <Link to="/pricing">{t('footer.pricing')}</Link>
          <Link to="/docs">{t('footer.quickStart')}</Link>
          <Link to="/account">{t('footer.account')}</Link>
          <Link to="/docs/enterprise">{t('footer.enterprise')}</Link>
        </nav>
      </div>
    </footer>
  );
}

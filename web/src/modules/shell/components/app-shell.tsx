import { Link, NavLink, Outlet, ScrollRestoration } from 'react-router';
import { useMe } from '../../account/hooks/use-me.ts';

const nav = [
  { to: '/pricing', label: 'Pricing' },
  { to: '/docs', label: 'Docs' },
  { to: '/account', label: 'Account' },
];

/** Header, page body and footer around every page. */
export function AppShell() {
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <div className="container site-header__inner">
          <Link to="/" className="brand" aria-label="svc home">
            <span className="brand__mark" aria-hidden="true" />
            svc
          </Link>
          <MainNav />
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
  const { me } = useMe();
  // Signed-in members get their usage one click away; `end` keeps Account unhighlighted on /account/usage.
  const items = me ? [...nav.slice(0, 2), { to: '/account/usage', label: 'Usage' }, ...nav.slice(2)] : nav;
  return (
    <nav aria-label="Main" className="site-nav">
      {items.map((item) => (
        <NavLink key={item.to} to={item.to} end={item.to === '/account'} className="site-nav__link">
          {item.label}
        </NavLink>
      ))}
    </nav>
  );
}

function SiteFooter() {
  const apiBase = `${window.location.origin}/v1`;
  return (
    <footer className="site-footer">
      <div className="container site-footer__inner">
        <p>
          <strong>svc</strong> — a self-hostable, OpenAI-compatible LLM gateway.
        </p>
        <p>
          API base URL <code>{apiBase}</code>
        </p>
        <nav aria-label="Footer" className="site-footer__links">
          <Link to="/pricing">Pricing</Link>
          <Link to="/docs">Quick start</Link>
          <Link to="/account">Account</Link>
        </nav>
      </div>
    </footer>
  );
}

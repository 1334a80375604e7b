import { Link } from 'react-router';

export interface NotAvailablePageProps {
  /** Page name, e.g. "Account". */
  title: string;
  /** What the page will let people do, e.g. "sign up, sign in and manage API keys". */
  purpose: string;
}

/** Stands in, truthfully, for a page this build of the web app does not have yet. */
export function NotAvailablePage({ title, purpose }: NotAvailablePageProps) {
  return (
    <section className="container page page--narrow">
      <title>{`${title} · svc`}</title>
      <p className="eyebrow">Not available yet</p>
      <h1>{title}</h1>
      <p className="lead">
        This page will let you {purpose}. It is not part of this build of the web app yet, so there is nothing to do
        here today.
      </p>
      <div className="actions">
        <Link to="/pricing" className="button">
          See plans and prices
        </Link>
        <Link to="/docs" className="button button--ghost">
          Read the quick start
        </Link>
      </div>
    </section>
  );
}

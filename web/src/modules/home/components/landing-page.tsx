import { Link } from 'react-router';
import { formatMoney } from '../../../lib/format.ts';
import type { PlanFragment } from '../../plan/graphql/plan.fragment.ts';
import { usePlans } from '../../plan/hooks/use-plans.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';

export function LandingPage() {
  const apiBase = `${window.location.origin}/v1`;
  return (
    <>
      <title>svc · OpenAI-compatible LLM gateway</title>
      <section className="hero">
        <div className="container hero__inner">
          <p className="eyebrow">Self-hostable · OpenAI-compatible</p>
          <h1 className="hero__title">One API for your models, with plans and usage pools built in.</h1>
          <p className="lead">
            svc sits in front of your inference servers and speaks the chat-completions API your tools already use. Point
            any OpenAI SDK at it, sign in from the command line, and pay for what you use on a Free, Pro or Max plan.
          </p>
          <div className="hero__base" aria-label="API base URL">
            <span className="muted">Base URL</span>
            <code>{apiBase}</code>
          </div>
          <div className="actions">
            <Link to="/pricing" className="button">
              See pricing
            </Link>
            <Link to="/docs" className="button button--ghost">
              Read the quick start
            </Link>
          </div>
        </div>
      </section>

      <div className="container page">
        <section className="features" aria-label="What svc offers">
          <article className="feature">
            <h2>OpenAI-compatible API</h2>
            <p>
              <code>POST /v1/chat/completions</code> with streaming, tools and the usual parameters. The official{' '}
              <code>openai</code> packages for Node and Python work unchanged with a <code>svc_live_</code> key.
            </p>
            <Link to="/docs">Quick start →</Link>
          </article>
          <article className="feature">
            <h2>Plans with usage pools</h2>
            <p>
              Usage is billed by input and output tokens and counted against pools per model class, for the day, the week
              and the month. Free includes a daily allowance; Pro and Max raise every pool.
            </p>
            <Link to="/pricing">Compare plans →</Link>
          </article>
          <article className="feature">
            <h2>Command-line sign-in by device code</h2>
            <p>
              A command-line client asks for a short code such as <code>BCDF-GHJK</code>. You approve it at{' '}
              <code>/device</code> while signed in, and the client receives its own session token (RFC 8628).
            </p>
            <Link to="/account">Your account →</Link>
          </article>
        </section>

        <section className="section" aria-labelledby="plans-teaser-heading">
          <div className="section__head">
            <h2 id="plans-teaser-heading">Plans</h2>
          </div>
          <PlanTeaser />
        </section>
      </div>
    </>
  );
}

function PlanTeaser() {
  const { plans, loading, error, retry } = usePlans();
  if (error) return <ErrorState title="The plans could not be loaded." error={error} onRetry={retry} retrying={loading} />;
  if (!plans) return <LoadingState label="Loading plans…" />;
  return (
    <ul className="plan-teaser">
      {plans.map((plan) => (
        <li key={plan.id}>
          <Link to="/pricing" className="plan-teaser__item">
            <span className="plan-teaser__name">{plan.name}</span>
            <span className="plan-teaser__price">{startingPrice(plan)}</span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

function startingPrice(plan: PlanFragment): string {
  const cheapest = [...plan.packages].sort((a, b) => a.price.amountMicros - b.price.amountMicros)[0];
  if (!cheapest) return '';
  const price = `${formatMoney(cheapest.price)} / ${cheapest.interval}`;
  return plan.packages.length > 1 ? `from ${price}` : price;
}

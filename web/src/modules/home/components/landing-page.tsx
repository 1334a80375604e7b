import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { usePlanText } from '../../plan/components/plan-labels.ts';
import type { PlanFragment } from '../../plan/graphql/plan.fragment.ts';
import { usePlans } from '../../plan/hooks/use-plans.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';

export function LandingPage() {
  const { t } = useTranslation('home');
  const apiBase = `${window.location.origin}/v1`;
  const code = { code: <code /> };
  return (
    <>
      <title>{t('title')}</title>
      <section className="hero">
        <div className="container hero__inner">
          <p className="eyebrow">{t('eyebrow')}</p>
          <h1 className="hero__title">{t('heading')}</h1>
          <p className="lead">{t('lead')}</p>
          <div className="hero__base" aria-label={t('baseUrlLabel')}>
            <span className="muted">{t('baseUrl')}</span>
            <code>{apiBase}</code>
          </div>
          <div className="actions">
            <Link to="/pricing" className="button">
              {t('seePricing')}
            </Link>
            <Link to="/docs" className="button button--ghost">
              {t('readQuickStart')}
            </Link>
          </div>
        </div>
      </section>

      <div className="container page">
        <section className="features" aria-label={t('features.label')}>
          <article className="feature">
            <h2>{t('features.api.title')}</h2>
            <p>
              <Trans t={t} i18nKey="features.api.body" components={code} />
            </p>
            <Link to="/docs">{t('features.api.link')}</Link>
          </article>
          <article className="feature">
            <h2>{t('features.plans.title')}</h2>
            <p>{t('features.plans.body')}</p>
            <Link to="/pricing">{t('features.plans.link')}</Link>
          </article>
          <article className="feature">
            <h2>{t('features.cli.title')}</h2>
            <p>
              <Trans t={t} i18nKey="features.cli.body" components={code} />
            </p>
            <Link to="/account">{t('features.cli.link')}</Link>
          </article>
        </section>

        <section className="section" aria-labelledby="plans-teaser-heading">
          <div className="section__head">
            <h2 id="plans-teaser-heading">{t('plans.heading')}</h2>
          </div>
          <PlanTeaser />
        </section>
      </div>
    </>
  );
}

function PlanTeaser() {
  const { t } = useTranslation('home');
  const format = useFormat();
  const text = usePlanText();
  const { plans, loading, error, retry } = usePlans();
  if (error) return <ErrorState title={t('plans.loadError')} error={error} onRetry={retry} retrying={loading} />;
  if (!plans) return <LoadingState label={t('plans.loading')} />;
  const startingPrice = (plan: PlanFragment) => {
    const cheapest = [...plan.packages].sort((a, b) => a.price.amountMicros - b.price.amountMicros)[0];
    if (!cheapest) return '';
    const price = format.money(cheapest.price);
    return plan.packages.length > 1 ? t('plans.fromPrice', { price }) : t('plans.price', { price });
  };
  return (
    <ul className="plan-teaser">
      {plans.map((plan) => (
        <li key={plan.id}>
          <Link to="/pricing" className="plan-teaser__item">
            <span className="plan-teaser__name">{text.planName(plan)}</span>
            <span className="plan-teaser__price">{startingPrice(plan)}</span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

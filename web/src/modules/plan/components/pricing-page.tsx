import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { ModelPriceTable, usePromotionSummary } from '../../model/components/model-price-table.tsx';
import { useMe } from '../../account/hooks/use-me.ts';
import { offersFor } from '../../billing/components/plan-options.tsx';
import { useModels } from '../../model/hooks/use-models.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { usePlans } from '../hooks/use-plans.ts';
import { PlanCard, type Purchase } from './plan-card.tsx';
import { PoolComparison } from './pool-comparison.tsx';

export function PricingPage() {
  const { t } = useTranslation(['plan', 'shell']);
  return (
    <div className="container page">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header">
        <h1>{t('title')}</h1>
        <p className="lead">{t('lead')}</p>
      </header>
      <PlansSection />
      <ModelsSection />
    </div>
  );
}

function PlansSection() {
  const { t } = useTranslation('plan');
  const format = useFormat();
  const { plans, loading, error, retry } = usePlans();
  const { me } = useMe();
  const purchase: Purchase =
    me && plans
      ? { current: me.planPackage, kinds: new Map(offersFor(plans, me.planPackage).map((offer) => [offer.pkg.id, offer.kind])) }
      : { current: null, kinds: null };
  // The catalogue's currency first, then every currency checkout charges in.
  const currencies = [...new Set(plans?.flatMap((plan) => plan.packages.flatMap((pkg) => [pkg.price.currency, ...pkg.prices.map((price) => price.currency)])) ?? [])];
  return (
    <>
      <section aria-labelledby="plans-heading" className="section">
        <div className="section__head">
          <h2 id="plans-heading">{t('plans.heading')}</h2>
          {currencies.length > 0 && <p className="muted">{t('plans.currencies', { currencies: format.list(currencies) })}</p>}
        </div>
        {error ? (
          <ErrorState title={t('plans.loadError')} error={error} onRetry={retry} retrying={loading} />
        ) : !plans ? (
          <LoadingState label={t('plans.loading')} />
        ) : plans.length === 0 ? (
          <EmptyState title={t('plans.empty')} />
        ) : (
          <div className="plan-grid">
            {plans.map((plan) => (
              <PlanCard key={plan.id} plan={plan} purchase={purchase} />
            ))}
          </div>
        )}
      </section>
      {plans && plans.length > 0 && !error && (
        <section aria-labelledby="pools-heading" className="section">
          <div className="section__head">
            <h2 id="pools-heading">{t('pools.heading')}</h2>
            <p className="muted">{t('pools.note')}</p>
          </div>
          <PoolComparison plans={plans} />
        </section>
      )}
    </>
  );
}

function ModelsSection() {
  const { t } = useTranslation('model');
  const { models, loading, error, retry } = useModels();
  const promotionSummary = usePromotionSummary();
  const promotion = models ? promotionSummary(models) : null;
  const components = { code: <code />, docs: <Link to="/docs" /> };
  return (
    <section aria-labelledby="models-heading" className="section">
      <div className="section__head">
        <h2 id="models-heading">{t('heading')}</h2>
        <p className="muted">
          {promotion ? (
            <Trans t={t} i18nKey="noteWithPromotion" values={{ promotion }} components={components} />
          ) : (
            <Trans t={t} i18nKey="note" components={components} />
          )}
        </p>
      </div>
      {error ? (
        <ErrorState title={t('loadError')} error={error} onRetry={retry} retrying={loading} />
      ) : !models ? (
        <LoadingState label={t('loading')} />
      ) : models.length === 0 ? (
        <EmptyState title={t('empty')} />
      ) : (
        <ModelPriceTable models={models} />
      )}
    </section>
  );
}

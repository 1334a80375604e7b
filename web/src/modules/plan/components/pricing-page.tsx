import { Link } from 'react-router';
import { ModelPriceTable, promotionSummary } from '../../model/components/model-price-table.tsx';
import { useModels } from '../../model/hooks/use-models.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { usePlans } from '../hooks/use-plans.ts';
import { PlanCard } from './plan-card.tsx';
import { PoolComparison } from './pool-comparison.tsx';

export function PricingPage() {
  return (
    <div className="container page">
      <title>Pricing · svc</title>
      <header className="page-header">
        <h1>Pricing</h1>
        <p className="lead">
          Every plan reaches the same models through the same API. Plans differ in how much usage is included: each
          account has a pool per model class for the day, the week and the month, and a request needs room in all three.
        </p>
      </header>
      <PlansSection />
      <ModelsSection />
    </div>
  );
}

function PlansSection() {
  const { plans, loading, error, retry } = usePlans();
  const currencies = [...new Set(plans?.flatMap((plan) => plan.packages.map((pkg) => pkg.price.currency)) ?? [])];
  return (
    <>
      <section aria-labelledby="plans-heading" className="section">
        <div className="section__head">
          <h2 id="plans-heading">Plans</h2>
          {currencies.length > 0 && <p className="muted">Prices in {currencies.join(', ')}, billed monthly.</p>}
        </div>
        {error ? (
          <ErrorState title="The plans could not be loaded." error={error} onRetry={retry} retrying={loading} />
        ) : !plans ? (
          <LoadingState label="Loading plans…" />
        ) : plans.length === 0 ? (
          <EmptyState title="No plans are configured on this server." />
        ) : (
          <div className="plan-grid">
            {plans.map((plan) => (
              <PlanCard key={plan.id} plan={plan} />
            ))}
          </div>
        )}
      </section>
      {plans && plans.length > 0 && !error && (
        <section aria-labelledby="pools-heading" className="section">
          <div className="section__head">
            <h2 id="pools-heading">Included usage</h2>
            <p className="muted">
              Pools are spent at the promoted token prices below. Bars in each group share one scale, so their lengths
              compare directly.
            </p>
          </div>
          <PoolComparison plans={plans} />
        </section>
      )}
    </>
  );
}

function ModelsSection() {
  const { models, loading, error, retry } = useModels();
  const promotion = models ? promotionSummary(models) : null;
  return (
    <section aria-labelledby="models-heading" className="section">
      <div className="section__head">
        <h2 id="models-heading">Model prices</h2>
        <p className="muted">
          Billed by input and output tokens. {promotion && <>Current promotion: {promotion}. </>}
          Use any id as <code>model</code>; see the <Link to="/docs">quick start</Link>.
        </p>
      </div>
      {error ? (
        <ErrorState title="The model prices could not be loaded." error={error} onRetry={retry} retrying={loading} />
      ) : !models ? (
        <LoadingState label="Loading model prices…" />
      ) : models.length === 0 ? (
        <EmptyState title="No models are configured on this server." />
      ) : (
        <ModelPriceTable models={models} />
      )}
    </section>
  );
}

/** The organisation's pools and its recent requests, drawn with `/account/usage`'s own components. */
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { modelClasses, usePlanText } from '../../plan/components/plan-labels.ts';
import { EmptyState } from '../../shell/components/query-state.tsx';
import { PoolGauge } from '../../usage/components/pool-gauge.tsx';
import { UsageHistoryTable } from '../../usage/components/usage-history-table.tsx';
import '../../usage/components/usage.css';
import type { OrganisationConsole } from '../graphql/organisation-console.query.ts';

export function OrganisationUsageSection({ organisation }: { organisation: OrganisationConsole }) {
  const { t } = useTranslation(['enterprise', 'usage']);
  const plan = usePlanText();
  const id = useId();
  const now = useMinuteClock();
  const { usage, usageHistory } = organisation;
  return (
    <>
      <section className="section console-section" aria-labelledby={`${id}-pools`}>
        <div className="section__head">
          <h2 id={`${id}-pools`}>{t('usage.pools')}</h2>
          <p className="muted">
            {t('usage.poolsNote', { currency: usage.currency, timezone: usage.timezone })}
          </p>
        </div>
        <div className="usage-classes">
          {modelClasses.map((cls) => (
            <section key={cls} className={`usage-class usage-class--${cls}`} aria-label={t('usage:pools.classLabel', { class: plan.className(cls) })}>
              <h3>{t('usage:pools.classModels', { class: plan.className(cls) })}</h3>
              <div className="gauges">
                {usage.pools
                  .filter((pool) => pool.class === cls)
                  .map((pool) => (
                    <PoolGauge key={pool.window} pool={pool} timezone={usage.timezone} now={now} />
                  ))}
              </div>
            </section>
          ))}
        </div>
      </section>
      <section className="section console-section" aria-labelledby={`${id}-history`}>
        <div className="section__head">
          <h2 id={`${id}-history`}>{t('usage.history')}</h2>
          <p className="muted">{t('usage.historyNote')}</p>
        </div>
        {usageHistory.nodes.length === 0 ? (
          <EmptyState title={t('usage.empty')}>
            <p className="muted">{t('usage.emptyHint')}</p>
          </EmptyState>
        ) : (
          <UsageHistoryTable nodes={usageHistory.nodes} />
        )}
      </section>
    </>
  );
}

function useMinuteClock(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** The pools of one payer drawn class by class, a gauge a window; `/account/usage` and the enterprise console both use it. */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { modelClasses, usePlanText } from '../../plan/components/plan-labels.ts';
import type { PoolUsageFragment } from '../graphql/pool-usage.fragment.ts';
import { PoolGauge } from './pool-gauge.tsx';
import './usage.css';

export function PoolClasses({ pools, timezone }: { pools: readonly PoolUsageFragment[]; timezone: string }) {
  const { t } = useTranslation('usage');
  const plan = usePlanText();
  const now = useMinuteClock();
  return (
    <div className="usage-classes">
      {modelClasses.map((cls) => (
        <section key={cls} className={`usage-class usage-class--${cls}`} aria-label={t('pools.classLabel', { class: plan.className(cls) })}>
          <h3>{t('pools.classModels', { class: plan.className(cls) })}</h3>
          <div className="gauges">
            {pools
              .filter((pool) => pool.class === cls)
              .map((pool) => (
                <PoolGauge key={pool.window} pool={pool} timezone={timezone} now={now} />
              ))}
          </div>
        </section>
      ))}
    </div>
  );
}

/** Now, refreshed every minute, for "resets in …". */
function useMinuteClock(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

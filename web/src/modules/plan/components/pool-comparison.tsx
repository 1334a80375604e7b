import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import type { ModelClass, PoolFragment, PoolWindow } from '../graphql/plan-package.fragment.ts';
import type { PlanFragment } from '../graphql/plan.fragment.ts';
import { modelClasses, poolWindows, usePlanText } from './plan-labels.ts';

interface Series {
  id: string;
  label: string;
  pools: PoolFragment[];
}

/**
 * Every package's pools drawn side by side, one group per class and window. Each group has its own
 * linear scale (its largest package fills the track), so bar lengths compare packages honestly.
 */
export function PoolComparison({ plans }: { plans: PlanFragment[] }) {
  const { t } = useTranslation('plan');
  const text = usePlanText();
  const series: Series[] = plans.flatMap((plan) => plan.packages.map((pkg) => ({ id: pkg.id, label: text.packageLabel(plan, pkg), pools: pkg.pools })));
  return (
    <div className="pool-comparison">
      <ul className="legend" aria-label={t('pools.legend')}>
        {series.map((item, index) => (
          <li key={item.id}>
            <span className="legend__swatch" style={{ background: seriesColor(index) }} aria-hidden="true" />
            {item.label}
          </li>
        ))}
      </ul>
      <div className="pool-comparison__classes">
        {modelClasses.map((cls) => (
          <section key={cls} className="pool-class" aria-labelledby={`pools-${cls}`}>
            <h3 id={`pools-${cls}`}>{t('pools.classModels', { class: text.className(cls) })}</h3>
            {poolWindows.map((window) => (
              <PoolGroup key={window} cls={cls} window={window} series={series} />
            ))}
          </section>
        ))}
      </div>
    </div>
  );
}

function PoolGroup({ cls, window, series }: { cls: ModelClass; window: PoolWindow; series: Series[] }) {
  const format = useFormat();
  const text = usePlanText();
  const rows = series.map((item, index) => ({ ...item, index, pool: item.pools.find((pool) => pool.class === cls && pool.window === window) }));
  const max = Math.max(0, ...rows.map((row) => row.pool?.limit.amountMicros ?? 0));
  return (
    <figure className="pool-group" data-pool={`${cls}-${window}`}>
      <figcaption>
        <strong>{text.windowLabel(window)}</strong> <span className="muted">· {text.windowReset(window)}</span>
      </figcaption>
      <ul className="bars">
        {rows.map((row) => {
          const micros = row.pool?.limit.amountMicros ?? 0;
          const share = max > 0 ? micros / max : 0;
          return (
            <li key={row.id} className="bar" data-package={row.id}>
              <span className="bar__label">{row.label}</span>
              <span className="bar__track" aria-hidden="true">
                <span
                  className="bar__fill"
                  // A sliver stays visible for tiny pools so "small" never reads as "none".
                  style={{ width: micros > 0 ? `max(3px, ${(share * 100).toFixed(2)}%)` : '0', background: seriesColor(row.index) }}
                />
              </span>
              <span className="bar__value">{row.pool ? format.money(row.pool.limit) : '—'}</span>
            </li>
          );
        })}
      </ul>
    </figure>
  );
}

const palette = ['var(--series-0)', 'var(--series-1)', 'var(--series-2)', 'var(--series-3)', 'var(--series-4)', 'var(--series-5)'];

function seriesColor(index: number): string {
  return palette[index % palette.length] ?? 'var(--series-0)';
}

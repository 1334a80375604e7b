import { formatMoney } from '../../../lib/format.ts';
import type { PoolUsageFragment } from '../graphql/pool-usage.fragment.ts';
import { formatResetAt, formatResetsIn, formatShare } from './format-reset.ts';

const windowTitles = { day: 'Today', week: 'This week', month: 'This month' } as const;

/**
 * One pool drawn as a bar: the fill is used ÷ limit on a linear scale, in the class's colour, turning
 * amber past 75 % and red past 90 %. A sliver stays visible for any use at all, so "a little" never
 * reads as "nothing".
 */
export function PoolGauge({ pool, timezone, now }: { pool: PoolUsageFragment; timezone: string; now: number }) {
  const used = pool.used.amountMicros;
  const limit = pool.limit.amountMicros;
  const share = limit > 0 ? Math.min(1, used / limit) : used > 0 ? 1 : 0;
  const level = share >= 0.9 ? 'critical' : share >= 0.75 ? 'high' : 'normal';
  const title = windowTitles[pool.window];
  return (
    <figure className={`gauge gauge--${pool.class} gauge--${level}`} data-pool={`${pool.class}-${pool.window}`}>
      <figcaption className="gauge__head">
        <strong>{title}</strong>
        <span className="gauge__share">{formatShare(used, limit)}</span>
      </figcaption>
      <div
        className="gauge__track"
        role="meter"
        aria-label={`${title}: used of limit`}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={Math.min(used, limit)}
        aria-valuetext={`${formatMoney(pool.used)} of ${formatMoney(pool.limit)} used`}
      >
        <span className="gauge__fill" style={{ width: used > 0 ? `max(4px, ${(share * 100).toFixed(3)}%)` : '0' }} />
      </div>
      <p className="gauge__numbers">
        <span data-testid="pool-used">{formatMoney(pool.used)}</span> <span className="muted">of {formatMoney(pool.limit)}</span>
      </p>
      <p className="gauge__meta muted">
        {formatMoney(pool.remaining)} left · resets {formatResetsIn(pool.resetsAt, now)}
        <br />
        <time dateTime={pool.resetsAt}>{formatResetAt(pool.resetsAt, timezone)}</time>
      </p>
    </figure>
  );
}

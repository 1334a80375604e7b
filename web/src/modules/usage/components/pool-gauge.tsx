import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import type { PoolUsageFragment } from '../graphql/pool-usage.fragment.ts';

const windowTitles = { day: 'gauge.today', week: 'gauge.thisWeek', month: 'gauge.thisMonth' } as const;

/**
 * One pool drawn as a bar: the fill is used ÷ limit on a linear scale, in the class's colour, turning
 * amber past 75 % and red past 90 %. A sliver stays visible for any use at all, so "a little" never
 * reads as "nothing".
 */
export function PoolGauge({ pool, timezone, now }: { pool: PoolUsageFragment; timezone: string; now: number }) {
  const { t } = useTranslation('usage');
  const format = useFormat();
  const used = pool.used.amountMicros;
  const limit = pool.limit.amountMicros;
  const share = limit > 0 ? Math.min(1, used / limit) : used > 0 ? 1 : 0;
  const level = share >= 0.9 ? 'critical' : share >= 0.75 ? 'high' : 'normal';
  const title = t(windowTitles[pool.window]);
  const untilReset = Date.parse(pool.resetsAt) - now;
  return (
    <figure className={`gauge gauge--${pool.class} gauge--${level}`} data-pool={`${pool.class}-${pool.window}`}>
      <figcaption className="gauge__head">
        <strong>{title}</strong>
        <span className="gauge__share">{format.share(used, limit)}</span>
      </figcaption>
      <div
        className="gauge__track"
        role="meter"
        aria-label={t('gauge.meterLabel', { window: title })}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={Math.min(used, limit)}
        aria-valuetext={t('gauge.meterValue', { used: format.money(pool.used), limit: format.money(pool.limit) })}
      >
        <span className="gauge__fill" style={{ width: used > 0 ? `max(4px, ${(share * 100).toFixed(3)}%)` : '0' }} />
      </div>
      <p className="gauge__numbers">
        <span data-testid="pool-used">{format.money(pool.used)}</span> <span className="muted">{t('gauge.ofLimit', { limit: format.money(pool.limit) })}</span>
      </p>
      <p className="gauge__meta muted">
        {t('gauge.left', { amount: format.money(pool.remaining) })} ·{' '}
        {untilReset < 60_000 ? t('gauge.resetsSoon') : t('gauge.resetsIn', { duration: format.duration(untilReset) })}
        <br />
        <time dateTime={pool.resetsAt}>{format.zonedDateTime(pool.resetsAt, timezone)}</time>
      </p>
    </figure>
  );
}

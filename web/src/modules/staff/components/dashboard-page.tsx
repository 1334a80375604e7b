/**
 * `/admin`: the search box (which answers on the accounts page), then what the service did over the last 7, 30 or 90 days — requests, tokens, spend, errors and
 * refunds by day and by model, revenue — and how long the enterprise review queue is, live (the admin
 * layout keeps the `reviewQueue` query current; this tile reads it).
 */
import { useQuery } from '@apollo/client/react';
import type { ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { rovingKeys } from '../../shell/hooks/roving-keys.ts';
import { STATS_QUERY, type StatsQuery, type StatsRange } from '../graphql/stats.query.ts';
import { useReviewQueue } from '../hooks/use-review-queue.ts';
import { DayBarChart } from './day-bar-chart.tsx';
import { SearchBar } from './search-bar.tsx';

const ranges: { value: StatsRange; days: number }[] = [
  { value: 'last_7_days', days: 7 },
  { value: 'last_30_days', days: 30 },
  { value: 'last_90_days', days: 90 },
];

function isRange(value: string | null): value is StatsRange {
  return ranges.some((range) => range.value === value);
}

export function DashboardPage() {
  const { t } = useTranslation('staff');
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const asked = params.get('range');
  const range: StatsRange = isRange(asked) ? asked : 'last_30_days';
  const { data, previousData, loading, error, refetch } = useQuery(STATS_QUERY, { variables: { range }, notifyOnNetworkStatusChange: true });
  const stats = (data ?? previousData)?.stats;
  const rangeValues = ranges.map((option) => option.value);
  const choose = (value: StatsRange) => setParams(value === 'last_30_days' ? {} : { range: value }, { replace: true });
  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('dashboard.title') })}</title>
      <header className="admin-head">
        <div>
          <h1>{t('dashboard.title')}</h1>
          {stats && (
            <p className="muted admin-head__note">
              <Trans t={t} i18nKey="dashboard.note" values={{ timezone: stats.timezone, currency: stats.currency }} components={{ strong: <strong /> }} />
            </p>
          )}
        </div>
        <div className="segmented" role="radiogroup" aria-label={t('dashboard.rangeLabel')} onKeyDown={rovingKeys(rangeValues, range, choose)}>
          {ranges.map((option) => (
            <button
              key={option.value}
              type="button"
              role="radio"
              aria-checked={range === option.value}
              tabIndex={range === option.value ? 0 : -1}
              className={range === option.value ? 'segmented__option segmented__option--active' : 'segmented__option'}
              onClick={() => choose(option.value)}
            >
              {t('dashboard.range', { count: option.days })}
            </button>
          ))}
        </div>
      </header>
      <SearchBar
        value=""
        onSearch={(q) => q && void navigate(`/admin/accounts?q=${encodeURIComponent(q)}`)}
        label={t('accounts.searchLabel')}
        placeholder={t('accounts.searchPlaceholder')}
        submitLabel={t('accounts.search')}
        maxLength={254}
      />
      {error && !stats ? (
        <ErrorState title={t('dashboard.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !stats ? (
        <LoadingState label={t('dashboard.loading')} />
      ) : (
        <div className={loading ? 'dashboard dashboard--stale' : 'dashboard'} aria-busy={loading}>
          <Tiles stats={stats} />
          <Charts stats={stats} />
          <ModelTable stats={stats} />
        </div>
      )}
    </div>
  );
}

type Stats = StatsQuery['stats'];

function Tiles({ stats }: { stats: Stats }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const { totals } = stats;
  const errorRate = totals.requests > 0 ? totals.errors / totals.requests : 0;
  const days = stats.days;
  return (
    <section className="tiles" aria-label={t('dashboard.tiles.label')}>
      <Tile label={t('dashboard.tiles.requests')} value={format.integer(totals.requests)} note={t('dashboard.tiles.inDays', { count: days })} />
      <Tile
        label={t('dashboard.tiles.tokensIn')}
        value={format.compact(totals.inputTokens)}
        note={t('dashboard.tiles.tokensNote', { total: format.integer(totals.inputTokens), count: days })}
      />
      <Tile
        label={t('dashboard.tiles.tokensOut')}
        value={format.compact(totals.outputTokens)}
        note={t('dashboard.tiles.tokensNote', { total: format.integer(totals.outputTokens), count: days })}
      />
      <Tile label={t('dashboard.tiles.spend')} value={format.compactMoney(totals.spend)} note={t('dashboard.tiles.spendNote', { amount: format.money(totals.spend) })} />
      <Tile
        label={t('dashboard.tiles.errors')}
        value={format.integer(totals.errors)}
        note={totals.requests > 0 ? t('dashboard.tiles.errorsNote', { share: format.percent(errorRate), count: totals.refunds }) : t('dashboard.tiles.noRequests')}
        tone={errorRate >= 0.05 ? 'warn' : undefined}
      />
      {/* One line per currency: amounts in different currencies are never added up, nor squeezed onto one line. */}
      <Tile
        label={t('dashboard.tiles.revenue')}
        value={
          stats.revenue.length === 0
            ? '—'
            : stats.revenue.map((r) => (
                <span key={r.currency} className="tile__line">
                  {format.money({ amount: r.paidAmount, currency: r.currency })}
                </span>
              ))
        }
        note={
          stats.revenue.length === 0
            ? t('dashboard.tiles.noRevenue')
            : stats.revenue.map((r) => (
                <span key={r.currency} className="tile__line">
                  {t('dashboard.tiles.revenueNote', { count: r.paidOrders, refunded: format.money({ amount: r.refundedAmount, currency: r.currency }) })}
                </span>
              ))
        }
        lines={stats.revenue.length}
      />
      <ReviewQueueTile />
    </section>
  );
}

/** The review queue: how many wait and since when, changing as applications arrive and are decided. */
function ReviewQueueTile() {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const queue = useReviewQueue();
  const pending = queue?.pending ?? 0;
  return (
    <Link to="/admin/applications" className={pending > 0 ? 'tile tile--link tile--attention' : 'tile tile--link'} data-testid="review-queue-tile">
      <span className="tile__label">{t('dashboard.tiles.reviewQueue')}</span>
      <span className="tile__value" aria-live="polite">
        {queue ? format.integer(pending) : '—'}
      </span>
      <span className="tile__note">
        {queue?.oldestSubmittedAt ? t('dashboard.tiles.oldestWaiting', { time: format.dateTime(queue.oldestSubmittedAt) }) : t('dashboard.tiles.nothingWaiting')}
      </span>
    </Link>
  );
}

function Tile({ label, value, note, tone, lines = 1 }: { label: string; value: ReactNode; note: ReactNode; tone?: 'warn'; lines?: number }) {
  return (
    <div className={['tile', tone && `tile--${tone}`, lines > 1 && 'tile--lines'].filter(Boolean).join(' ')}>
      <span className="tile__label">{label}</span>
      <span className="tile__value">{value}</span>
      <span className="tile__note">{note}</span>
    </div>
  );
}

function Charts({ stats }: { stats: Stats }) {
  const { t } = useTranslation(['staff', 'usage']);
  const format = useFormat();
  const currency = stats.currency;
  const peak = (values: number[]) => Math.max(0, ...values);
  const requests = stats.byDay.map((d) => d.requests);
  const failures = stats.byStatus.filter((s) => s.status !== 'ok');
  return (
    <section className="charts" aria-label={t('dashboard.charts.label')}>
      <DayBarChart
        title={t('dashboard.charts.requests')}
        summary={t('dashboard.charts.peak', { value: format.integer(peak(requests)) })}
        series={[{ label: t('dashboard.charts.requestsSeries'), color: 'var(--series-1)' }]}
        days={stats.byDay.map((d) => ({ date: d.date, values: [d.requests] }))}
        format={format.integer}
      />
      <DayBarChart
        title={t('dashboard.charts.tokens')}
        summary={t('dashboard.charts.tokensTotal', { total: format.compact(stats.totals.inputTokens + stats.totals.outputTokens) })}
        series={[
          { label: t('dashboard.charts.tokensIn'), color: 'var(--series-5)' },
          { label: t('dashboard.charts.tokensOut'), color: 'var(--series-2)' },
        ]}
        days={stats.byDay.map((d) => ({ date: d.date, values: [d.inputTokens, d.outputTokens] }))}
        format={format.integer}
      />
      <DayBarChart
        title={t('dashboard.charts.spend')}
        summary={format.money(stats.totals.spend)}
        series={[{ label: t('dashboard.charts.spendSeries'), color: 'var(--series-3)' }]}
        days={stats.byDay.map((d) => ({ date: d.date, values: [d.spend.amountMicros] }))}
        format={(micros) => format.micros(micros, currency)}
        // The axis only needs a readable size; the exact amounts are in the tooltip and the table.
        formatAxis={(micros) => format.compact(micros / 1_000_000)}
        integer={false}
      />
      <DayBarChart
        title={t('dashboard.charts.errors')}
        summary={
          failures.length === 0
            ? t('dashboard.charts.noErrors')
            : failures.map((s) => t('dashboard.charts.statusCount', { status: t(`usage:history.status.${s.status}`), requests: format.integer(s.requests) })).join(' · ')
        }
        series={[
          { label: t('dashboard.charts.refunded'), color: 'var(--series-0)' },
          { label: t('dashboard.charts.otherErrors'), color: 'color-mix(in srgb, var(--danger) 72%, white)' },
        ]}
        days={stats.byDay.map((d) => ({ date: d.date, values: [d.refunds, d.errors - d.refunds] }))}
        format={format.integer}
      />
    </section>
  );
}

function ModelTable({ stats }: { stats: Stats }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const most = Math.max(1, ...stats.byModel.map((m) => m.requests));
  const first = stats.byDay[0]?.date;
  const last = stats.byDay.at(-1)?.date;
  return (
    <section className="admin-section" aria-labelledby="by-model">
      <div className="admin-section__head">
        <h2 id="by-model">{t('dashboard.byModel.heading')}</h2>
        {first && last && <p className="muted">{t('dashboard.byModel.range', { from: format.day(first), to: format.day(last) })}</p>}
      </div>
      {stats.byModel.length === 0 ? (
        <div className="state state--empty">
          <p className="state__title">{t('dashboard.byModel.empty')}</p>
          <p>{t('dashboard.byModel.emptyHint')}</p>
        </div>
      ) : (
        <div className="table-scroll">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">{t('dashboard.byModel.columns.model')}</th>
                <th scope="col" className="admin-table__bar-head">
                  {t('dashboard.byModel.columns.requests')}
                </th>
                <th scope="col" className="num">
                  {t('dashboard.byModel.columns.tokensIn')}
                </th>
                <th scope="col" className="num">
                  {t('dashboard.byModel.columns.tokensOut')}
                </th>
                <th scope="col" className="num">
                  {t('dashboard.byModel.columns.spend')}
                </th>
                <th scope="col" className="num">
                  {t('dashboard.byModel.columns.errors')}
                </th>
                <th scope="col" className="num">
                  {t('dashboard.byModel.columns.refunds')}
                </th>
              </tr>
            </thead>
            <tbody>
              {stats.byModel.map((model) => (
                <tr key={model.model}>
                  <th scope="row">
                    <code className="model-code">{model.model}</code>
                  </th>
                  <td>
                    <div className="admin-table__bar">
                      <span className="inline-bar" aria-hidden="true">
                        <span style={{ width: `${Math.max(1, (model.requests / most) * 100)}%` }} />
                      </span>
                      <span className="num">{format.integer(model.requests)}</span>
                    </div>
                  </td>
                  <td className="num">{format.integer(model.inputTokens)}</td>
                  <td className="num">{format.integer(model.outputTokens)}</td>
                  <td className="num">{format.money(model.spend)}</td>
                  <td className="num">
                    {format.integer(model.errors)}
                    {model.errors > 0 && <span className="muted"> · {format.percent(model.errors / model.requests)}</span>}
                  </td>
                  <td className="num">{format.integer(model.refunds)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

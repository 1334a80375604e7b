/**
 * `/admin`: what the service did over the last 7, 30 or 90 days — requests, tokens, spend, errors and
 * refunds by day and by model, revenue — and how long the enterprise review queue is.
 */
import { useQuery } from '@apollo/client/react';
import { Link, useSearchParams } from 'react-router';
import { formatCompact, formatCompactMoney, formatCompactNumber, formatDay, formatInteger, formatMicros, formatMoney, formatPercent } from '../../../lib/format.ts';
import { formatTime } from '../../account/components/format-time.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { STATS_QUERY, type StatsQuery, type StatsRange } from '../graphql/stats.query.ts';
import { DayBarChart } from './day-bar-chart.tsx';
import { statusLabels } from './labels.ts';

const ranges: { value: StatsRange; label: string }[] = [
  { value: 'last_7_days', label: '7 days' },
  { value: 'last_30_days', label: '30 days' },
  { value: 'last_90_days', label: '90 days' },
];

function isRange(value: string | null): value is StatsRange {
  return ranges.some((range) => range.value === value);
}

export function DashboardPage() {
  const [params, setParams] = useSearchParams();
  const asked = params.get('range');
  const range: StatsRange = isRange(asked) ? asked : 'last_30_days';
  const { data, previousData, loading, error, refetch } = useQuery(STATS_QUERY, { variables: { range }, notifyOnNetworkStatusChange: true });
  const stats = (data ?? previousData)?.stats;
  return (
    <div className="admin-page">
      <title>Dashboard · svc admin</title>
      <header className="admin-head">
        <div>
          <h1>Dashboard</h1>
          {stats && (
            <p className="muted admin-head__note">
              Days in <strong>{stats.timezone}</strong> time, today so far included · amounts in {stats.currency} at effective prices
            </p>
          )}
        </div>
        <div className="segmented" role="radiogroup" aria-label="Range">
          {ranges.map((option) => (
            <button
              key={option.value}
              type="button"
              role="radio"
              aria-checked={range === option.value}
              className={range === option.value ? 'segmented__option segmented__option--active' : 'segmented__option'}
              onClick={() => setParams(option.value === 'last_30_days' ? {} : { range: option.value }, { replace: true })}
            >
              {option.label}
            </button>
          ))}
        </div>
      </header>
      {error && !stats ? (
        <ErrorState title="The dashboard could not be loaded." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !stats ? (
        <LoadingState label="Adding up the ledger…" />
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
  const { totals, reviewQueue } = stats;
  const errorRate = totals.requests > 0 ? totals.errors / totals.requests : 0;
  return (
    <section className="tiles" aria-label="Totals">
      <Tile label="Requests" value={formatInteger(totals.requests)} note={`in ${stats.days} days`} />
      <Tile label="Tokens in" value={formatCompact(totals.inputTokens)} note={`${formatInteger(totals.inputTokens)} in ${stats.days} days`} />
      <Tile label="Tokens out" value={formatCompact(totals.outputTokens)} note={`${formatInteger(totals.outputTokens)} in ${stats.days} days`} />
      <Tile label="Spend" value={formatCompactMoney(totals.spend)} note={`${formatMoney(totals.spend)} charged to pools`} />
      <Tile
        label="Errors"
        value={formatInteger(totals.errors)}
        note={totals.requests > 0 ? `${formatPercent(errorRate)} of requests · ${formatInteger(totals.refunds)} refunded` : 'no requests'}
        tone={errorRate >= 0.05 ? 'warn' : undefined}
      />
      <Tile
        label="Revenue"
        value={stats.revenue.length === 0 ? '—' : stats.revenue.map((r) => formatMoney({ amount: r.paidAmount, currency: r.currency })).join(' · ')}
        note={
          stats.revenue.length === 0
            ? 'no paid orders'
            : stats.revenue.map((r) => `${formatInteger(r.paidOrders)} paid, ${formatMoney({ amount: r.refundedAmount, currency: r.currency })} refunded`).join(' · ')
        }
      />
      <Link to="/admin/applications" className={reviewQueue.pending > 0 ? 'tile tile--link tile--attention' : 'tile tile--link'}>
        <span className="tile__label">Review queue</span>
        <span className="tile__value">{formatInteger(reviewQueue.pending)}</span>
        <span className="tile__note">
          {reviewQueue.oldestSubmittedAt ? `oldest waiting since ${formatTime(reviewQueue.oldestSubmittedAt)}` : 'nothing waiting'}
        </span>
      </Link>
    </section>
  );
}

function Tile({ label, value, note, tone }: { label: string; value: string; note: string; tone?: 'warn' }) {
  return (
    <div className={tone ? `tile tile--${tone}` : 'tile'}>
      <span className="tile__label">{label}</span>
      <span className="tile__value">{value}</span>
      <span className="tile__note">{note}</span>
    </div>
  );
}

function Charts({ stats }: { stats: Stats }) {
  const currency = stats.currency;
  const peak = (values: number[]) => Math.max(0, ...values);
  const requests = stats.byDay.map((d) => d.requests);
  return (
    <section className="charts" aria-label="By day">
      <DayBarChart
        title="Requests per day"
        summary={`peak ${formatInteger(peak(requests))}`}
        series={[{ label: 'Requests', color: 'var(--series-1)' }]}
        days={stats.byDay.map((d) => ({ date: d.date, values: [d.requests] }))}
        format={formatInteger}
      />
      <DayBarChart
        title="Tokens per day"
        summary={`${formatCompact(stats.totals.inputTokens + stats.totals.outputTokens)} in all`}
        series={[
          { label: 'In', color: 'var(--series-5)' },
          { label: 'Out', color: 'var(--series-2)' },
        ]}
        days={stats.byDay.map((d) => ({ date: d.date, values: [d.inputTokens, d.outputTokens] }))}
        format={formatInteger}
      />
      <DayBarChart
        title="Spend per day"
        summary={formatMoney(stats.totals.spend)}
        series={[{ label: 'Spend', color: 'var(--series-3)' }]}
        days={stats.byDay.map((d) => ({ date: d.date, values: [d.spend.amountMicros] }))}
        format={(micros) => formatMicros(micros, currency)}
        formatAxis={(micros) => formatCompactNumber(micros / 1_000_000)}
        integer={false}
      />
      <DayBarChart
        title="Errors and refunds per day"
        summary={stats.byStatus.filter((s) => s.status !== 'ok').map((s) => `${statusLabels[s.status]} ${formatInteger(s.requests)}`).join(' · ') || 'none'}
        series={[
          { label: 'Refunded', color: 'var(--series-0)' },
          { label: 'Other errors', color: 'color-mix(in srgb, var(--danger) 72%, white)' },
        ]}
        days={stats.byDay.map((d) => ({ date: d.date, values: [d.refunds, d.errors - d.refunds] }))}
        format={formatInteger}
      />
    </section>
  );
}

function ModelTable({ stats }: { stats: Stats }) {
  const most = Math.max(1, ...stats.byModel.map((m) => m.requests));
  const first = stats.byDay[0]?.date;
  const last = stats.byDay.at(-1)?.date;
  return (
    <section className="admin-section" aria-labelledby="by-model">
      <div className="admin-section__head">
        <h2 id="by-model">By model</h2>
        {first && last && (
          <p className="muted">
            {formatDay(first)} – {formatDay(last)}
          </p>
        )}
      </div>
      {stats.byModel.length === 0 ? (
        <div className="state state--empty">
          <p className="state__title">No requests in this range.</p>
          <p>Models show up here once members or organisations call the API.</p>
        </div>
      ) : (
        <div className="table-scroll">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" className="admin-table__bar-head">
                  Requests
                </th>
                <th scope="col" className="num">
                  Tokens in
                </th>
                <th scope="col" className="num">
                  Tokens out
                </th>
                <th scope="col" className="num">
                  Spend
                </th>
                <th scope="col" className="num">
                  Errors
                </th>
                <th scope="col" className="num">
                  Refunds
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
                      <span className="num">{formatInteger(model.requests)}</span>
                    </div>
                  </td>
                  <td className="num">{formatInteger(model.inputTokens)}</td>
                  <td className="num">{formatInteger(model.outputTokens)}</td>
                  <td className="num">{formatMoney(model.spend)}</td>
                  <td className="num">
                    {formatInteger(model.errors)}
                    {model.errors > 0 && <span className="muted"> · {formatPercent(model.errors / model.requests)}</span>}
                  </td>
                  <td className="num">{formatInteger(model.refunds)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

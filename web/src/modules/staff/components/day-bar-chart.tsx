/**
 * A bar per day, drawn in plain SVG at the card's pixel width (so text stays crisp): one series, or several
 * stacked (tokens in and out; refunds and other errors). Hovering or focusing a day shows its figures;
 * screen readers get the same figures as a table.
 */
import { useId, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';

export interface ChartSeries {
  /** Translated by the caller, like every text the chart is given. */
  label: string;
  /** A CSS colour, e.g. `var(--series-1)`. */
  color: string;
}

export interface ChartDay {
  /** YYYY-MM-DD */
  date: string;
  /** One value per series, in the order of `series`. */
  values: number[];
}

export interface DayBarChartProps {
  title: string;
  series: ChartSeries[];
  days: ChartDay[];
  /** Exact value for the tooltip and the table, e.g. "12,345" or "USD 1.20". */
  format(value: number): string;
  /** Short value for the axis; defaults to compact numbers ("1.2K" / "1.2万"). */
  formatAxis?(value: number): string;
  /** What the figure in the card's head sums up (e.g. "1,234 in 30 days"); optional. */
  summary?: string;
  height?: number;
  /** Whole numbers (counts): the axis never shows fractions. */
  integer?: boolean;
}

const margin = { top: 10, right: 8, bottom: 22, left: 46 };

export function DayBarChart({ title, series, days, format, formatAxis, summary, height = 170, integer = true }: DayBarChartProps) {
  const { t } = useTranslation('staff');
  const formatters = useFormat();
  const axis = formatAxis ?? formatters.compact;
  const id = useId();
  const [box, width] = useWidth();
  const [hovered, setHovered] = useState<number | null>(null);
  const totals = days.map((day) => day.values.reduce((sum, value) => sum + value, 0));
  const max = Math.max(0, ...totals);
  const ticks = niceTicks(max, integer);
  const top = ticks.at(-1)!;
  const plotWidth = Math.max(0, width - margin.left - margin.right);
  const plotHeight = height - margin.top - margin.bottom;
  const band = days.length > 0 ? plotWidth / days.length : 0;
  const barWidth = Math.max(1, Math.min(28, band * (days.length > 40 ? 0.8 : 0.68)));
  const y = (value: number) => margin.top + plotHeight - (top > 0 ? (value / top) * plotHeight : 0);
  const labelEvery = Math.max(1, Math.ceil(days.length / Math.max(2, Math.floor(plotWidth / 64))));
  const empty = max === 0;
  const active = hovered === null ? null : days[hovered];

  const onKey = (event: KeyboardEvent<SVGSVGElement>) => {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
    event.preventDefault();
    const step = event.key === 'ArrowLeft' ? -1 : 1;
    setHovered((current) => Math.min(days.length - 1, Math.max(0, (current ?? (step > 0 ? -1 : days.length)) + step)));
  };

  return (
    <figure className="chart" aria-labelledby={`${id}-title`}>
      <figcaption className="chart__head">
        <span id={`${id}-title`} className="chart__title">
          {title}
        </span>
        {summary && <span className="chart__summary">{summary}</span>}
      </figcaption>
      {series.length > 1 && (
        <ul className="chart__legend" aria-hidden="true">
          {series.map((s) => (
            <li key={s.label}>
              <span className="chart__swatch" style={{ background: s.color }} />
              {s.label}
            </li>
          ))}
        </ul>
      )}
      <div className="chart__plot" ref={box} style={{ height }}>
        {width > 0 && (
          <svg
            width={width}
            height={height}
            role="img"
            aria-label={empty ? t('chart.emptyLabel', { title }) : t('chart.label', { title, value: format(max), day: formatters.day(days[totals.indexOf(max)]!.date) })}
            tabIndex={0}
            onKeyDown={onKey}
            onBlur={() => setHovered(null)}
            onMouseLeave={() => setHovered(null)}
          >
            {ticks.map((tick) => (
              <g key={tick} className="chart__grid">
                <line x1={margin.left} x2={width - margin.right} y1={y(tick)} y2={y(tick)} />
                <text x={margin.left - 6} y={y(tick)} dy="0.32em" textAnchor="end">
                  {empty && tick > 0 ? '' : axis(tick)}
                </text>
              </g>
            ))}
            {days.map((day, index) => {
              const x = margin.left + index * band + (band - barWidth) / 2;
              let base = 0;
              return (
                <g key={day.date} className={hovered === index ? 'chart__bar chart__bar--active' : 'chart__bar'}>
                  {day.values.map((value, s) => {
                    const from = base;
                    base += value;
                    if (value <= 0) return null;
                    // At least a pixel, so a small day never reads as nothing.
                    const h = Math.max(1, y(from) - y(base));
                    return <rect key={s} x={x} width={barWidth} y={y(from) - h} height={h} fill={series[s]!.color} rx={barWidth > 6 ? 2 : 0} />;
                  })}
                  <rect className="chart__hit" x={margin.left + index * band} width={band} y={margin.top} height={plotHeight} onMouseEnter={() => setHovered(index)} />
                </g>
              );
            })}
            {days.map((day, index) =>
              (days.length - 1 - index) % labelEvery === 0 ? (
                <text key={day.date} className="chart__x" x={margin.left + index * band + band / 2} y={height - 6} textAnchor="middle">
                  {formatters.day(day.date)}
                </text>
              ) : null,
            )}
          </svg>
        )}
        {empty && <p className="chart__empty">{t('chart.empty')}</p>}
        {active && hovered !== null && (
          <div
            className="chart__tooltip"
            role="status"
            style={{ left: Math.min(Math.max(margin.left + hovered * band + band / 2, 80), Math.max(80, width - 80)) }}
          >
            <strong>{formatters.day(active.date, { weekday: true })}</strong>
            {series.map((s, i) => (
              <span key={s.label} className="chart__tooltip-row">
                <span className="chart__swatch" style={{ background: s.color }} />
                {series.length > 1 ? `${s.label} ` : ''}
                <b>{format(active.values[i] ?? 0)}</b>
              </span>
            ))}
          </div>
        )}
      </div>
      {/* In a div: a table's height grows to its rows, so it cannot be hidden by sizing it down itself. */}
      <div className="visually-hidden">
        <table>
          <caption>{title}</caption>
          <thead>
            <tr>
              <th scope="col">{t('chart.day')}</th>
              {series.map((s) => (
                <th key={s.label} scope="col">
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days.map((day) => (
              <tr key={day.date}>
                <th scope="row">{formatters.day(day.date, { year: true })}</th>
                {day.values.map((value, i) => (
                  <td key={i}>{format(value)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

/** Three to five gridlines in round steps (1, 2 or 5 × 10ⁿ) from 0 to at least `max`. */
function niceTicks(max: number, integer: boolean): number[] {
  if (max <= 0) return [0, 1];
  const raw = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * magnitude).find((candidate) => candidate >= raw)!;
  if (integer) step = Math.max(1, Math.round(step));
  const count = Math.ceil(max / step);
  return Array.from({ length: count + 1 }, (_, i) => i * step);
}

/** The element's width in CSS pixels, kept current as the layout changes. */
function useWidth(): [(element: HTMLDivElement | null) => void, number] {
  const [element, setElement] = useState<HTMLDivElement | null>(null);
  const [width, setWidth] = useState(0);
  const observer = useRef<ResizeObserver | null>(null);
  useLayoutEffect(() => {
    if (!element) return;
    setWidth(element.clientWidth);
    observer.current = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    observer.current.observe(element);
    return () => observer.current?.disconnect();
  }, [element]);
  return [setElement, width];
}

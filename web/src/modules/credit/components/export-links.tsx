/** Download buttons for the CSV exports (streamed by the server) over a chosen date range. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

export function ExportLinks() {
  const { t } = useTranslation('credit');
  const today = new Date().toISOString().slice(0, 10);
  const [from, setFrom] = useState(`${today.slice(0, 4)}-01-01`);
  const [to, setTo] = useState(today);
  const query = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  const links = [
    ['usage.csv', 'granularity=request', t('exports.usageRequests')],
    ['usage.csv', 'granularity=day', t('exports.usageDays')],
    ['payments.csv', '', t('exports.payments')],
    ['credits.csv', '', t('exports.credits')],
  ] as const;
  return (
    <section className="credit-card credits-exports" aria-label={t('exports.heading')}>
      <h2>{t('exports.heading')}</h2>
      <div className="credits-exports__range">
        <label>
          {t('exports.from')}
          <input type="date" value={from} onChange={(event) => setFrom(event.target.value)} />
        </label>
        <label>
          {t('exports.to')}
          <input type="date" value={to} onChange={(event) => setTo(event.target.value)} />
        </label>
      </div>
      <p className="credits-exports__links">
        {links.map(([file, extra, label]) => (
          <a key={label} className="button button--ghost" href={`/api/membership/exports/${file}?${query}${extra ? `&${extra}` : ''}`} download>
            {label}
          </a>
        ))}
      </p>
    </section>
  );
}

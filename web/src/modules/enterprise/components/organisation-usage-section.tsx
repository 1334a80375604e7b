/** The organisation's pools and its recent requests, drawn with `/account/usage`'s own components. */
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { EmptyState } from '../../shell/components/query-state.tsx';
import { PoolClasses } from '../../usage/components/pool-classes.tsx';
import { UsageHistoryTable } from '../../usage/components/usage-history-table.tsx';
import '../../usage/components/usage.css';
import type { OrganisationConsole } from '../graphql/organisation-console.query.ts';

export function OrganisationUsageSection({ organisation }: { organisation: OrganisationConsole }) {
  const { t } = useTranslation('enterprise');
  const id = useId();
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
        <PoolClasses pools={usage.pools} timezone={usage.timezone} />
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

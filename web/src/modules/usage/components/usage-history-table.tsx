import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { usePlanText } from '../../plan/components/plan-labels.ts';
import type { UsageRecordFragment } from '../graphql/usage-record.fragment.ts';

/** Recent requests, newest first: when, which model, what it produced, tokens in → out, cost with its currency, outcome. */
export function UsageHistoryTable({ nodes }: { nodes: UsageRecordFragment[] }) {
  const { t } = useTranslation('usage');
  const format = useFormat();
  const plan = usePlanText();
  return (
    <div className="table-scroll">
      <table className="data-table usage-table">
        <thead>
          <tr>
            <th scope="col">{t('history.columns.time')}</th>
            <th scope="col">{t('history.columns.model')}</th>
            <th scope="col">{t('history.columns.produced')}</th>
            <th scope="col" className="num">
              {t('history.columns.tokens')}
            </th>
            <th scope="col" className="num">
              {t('history.columns.cost')}
            </th>
            <th scope="col">{t('history.columns.status')}</th>
            <th scope="col" className="num">
              {t('history.columns.latency')}
            </th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((node) => (
            <tr key={node.requestId} data-request-id={node.requestId}>
              <td className="usage-table__time">
                <time dateTime={node.createdAt}>{format.dateTime(node.createdAt)}</time>
              </td>
              <td>
                <code>{node.model}</code>
                {node.routedModel !== node.model && (
                  <span className="muted" title={t('history.routedTitle')}>
                    {' → '}
                    <code>{node.routedModel}</code>
                  </span>
                )}
                <span className={`tier tier--${node.class}`}>{plan.className(node.class)}</span>
                {node.stream && <span className="muted usage-table__note">{t('history.stream')}</span>}
              </td>
              <td data-testid="request-produced">
                {node.unit && node.unitQuantity !== null ? t(`history.produced.${node.unit}`, { count: node.unitQuantity }) : <span className="muted">{t('history.produced.text')}</span>}
              </td>
              <td className="num">
                {t('history.tokens', { input: format.integer(node.inputTokens), output: format.integer(node.outputTokens) })}
                {node.estimated && (
                  <span className="badge badge--estimated" title={t('history.estimatedHint')}>
                    {t('history.estimated')}
                  </span>
                )}
              </td>
              <td className="num" data-testid="request-cost">
                {format.money(node.cost)}
              </td>
              <td>
                <span className={`status status--${node.status}`} title={t(`history.statusHint.${node.status}`)}>
                  {t(`history.status.${node.status}`)}
                </span>
              </td>
              <td className="num">{format.milliseconds(node.latencyMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

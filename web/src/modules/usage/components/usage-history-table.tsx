import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { usePlanText } from '../../plan/components/plan-labels.ts';
import type { UsageRecordFragment } from '../graphql/usage-record.fragment.ts';
import { CredentialLabel, ShortRequestId, shortRequestId } from './request-parts.tsx';

/**
 * Recent requests, newest first: when, which request (its id, opening its story when `requestHref` is
 * given), which model, which key, tokens in → out, cost with its currency, outcome and duration. On a
 * narrow screen each request is a card with its labels beside the values.
 */
export function UsageHistoryTable({ nodes, requestHref }: { nodes: UsageRecordFragment[]; requestHref?: (requestId: string) => string }) {
  const { t } = useTranslation('usage');
  const format = useFormat();
  const plan = usePlanText();
  const columns = {
    time: t('history.columns.time'),
    request: t('history.columns.request'),
    model: t('history.columns.model'),
    key: t('history.columns.key'),
    tokens: t('history.columns.tokens'),
    cost: t('history.columns.cost'),
    status: t('history.columns.status'),
    duration: t('history.columns.duration'),
  };
  return (
    <div className="table-scroll">
      <table className="data-table usage-table">
        <thead>
          <tr>
            <th scope="col">{columns.time}</th>
            <th scope="col">{columns.request}</th>
            <th scope="col">{columns.model}</th>
            <th scope="col">{columns.key}</th>
            <th scope="col" className="num">
              {columns.tokens}
            </th>
            <th scope="col" className="num">
              {columns.cost}
            </th>
            <th scope="col">{columns.status}</th>
            <th scope="col" className="num">
              {columns.duration}
            </th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((node) => (
            <tr key={node.requestId} data-request-id={node.requestId}>
              <td className="usage-table__time" data-label={columns.time}>
                <time dateTime={node.createdAt}>{format.dateTime(node.createdAt)}</time>
              </td>
              <td data-label={columns.request}>
                {requestHref ? (
                  <Link
                    to={requestHref(node.requestId)}
                    className="request-link"
                    // The name holds what the link shows, so speech input can say what it sees.
                    aria-label={`${t('history.openRequest')} ${shortRequestId(node.requestId)}`}
                  >
                    <ShortRequestId id={node.requestId} />
                  </Link>
                ) : (
                  <ShortRequestId id={node.requestId} />
                )}
              </td>
              <td data-label={columns.model}>
                <span className="usage-table__model">
                  <code>{node.model}</code>
                  {node.routedModel !== node.model && (
                    <span className="muted" title={t('history.routedTitle')}>
                      {' → '}
                      <code>{node.routedModel}</code>
                    </span>
                  )}
                </span>
                <span className="muted usage-table__note">
                  <span className={`usage-table__class usage-table__class--${node.class}`}>{plan.className(node.class)}</span>
                  {node.unit && node.unitQuantity !== null && (
                    <>
                      {' · '}
                      <span data-testid="request-produced">{t(`history.produced.${node.unit}`, { count: node.unitQuantity })}</span>
                    </>
                  )}
                  {node.stream && ` · ${t('history.stream')}`}
                </span>
              </td>
              <td data-label={columns.key}>
                <CredentialLabel record={node} />
              </td>
              <td className="num" data-label={columns.tokens}>
                {t('history.tokens', { input: format.integer(node.inputTokens), output: format.integer(node.outputTokens) })}
                {node.estimated && (
                  <span className="badge badge--estimated" title={t('history.estimatedHint')}>
                    {t('history.estimated')}
                  </span>
                )}
              </td>
              <td className="num" data-testid="request-cost" data-label={columns.cost}>
                {format.money(node.cost)}
              </td>
              <td data-label={columns.status}>
                <span className={`status status--${node.status}`} title={t(`history.statusHint.${node.status}`)}>
                  {t(`history.status.${node.status}`)}
                </span>
                {node.errorCode && <code className="usage-table__code">{node.errorCode}</code>}
              </td>
              <td className="num" data-label={columns.duration}>
                {format.seconds(node.durationSeconds)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

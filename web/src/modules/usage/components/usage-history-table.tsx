import { formatDecimal, formatInteger, formatMoney } from '../../../lib/format.ts';
import { formatTime } from '../../account/components/format-time.ts';
import { classLabels } from '../../plan/components/plan-labels.ts';
import type { MeterUnit, UsageRecordFragment, UsageStatus } from '../graphql/usage-record.fragment.ts';

const statusLabels: Record<UsageStatus, string> = {
  ok: 'Completed',
  refunded: 'Refunded',
  client_disconnected: 'Client left',
  upstream_failed: 'Model failed',
  abandoned: 'Released',
};

const statusHints: Record<UsageStatus, string> = {
  ok: 'Billed for its tokens.',
  refunded: 'Failed before any output; nothing was billed.',
  client_disconnected: 'The client left mid-reply; billed for what was produced.',
  upstream_failed: 'The model server failed mid-reply; billed for what was produced.',
  abandoned: 'The serving instance stopped; the reservation was released unbilled.',
};

/** What a media or search request produced, beside its tokens: "2 images", "12.5 s of audio". */
const unitLabels: Record<MeterUnit, (quantity: number) => string> = {
  image: (quantity) => (quantity === 1 ? '1 image' : `${formatInteger(quantity)} images`),
  audio_second: (quantity) => `${formatDecimal(quantity)} s of audio`,
  search: (quantity) => (quantity === 1 ? '1 search' : `${formatInteger(quantity)} searches`),
};

/** Recent requests, newest first: when, which model, what it produced, tokens in → out, cost with its currency, outcome. */
export function UsageHistoryTable({ nodes }: { nodes: UsageRecordFragment[] }) {
  return (
    <div className="table-scroll">
      <table className="data-table usage-table">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Model</th>
            <th scope="col">Produced</th>
            <th scope="col" className="num">
              Tokens in → out
            </th>
            <th scope="col" className="num">
              Cost
            </th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Latency
            </th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((node) => (
            <tr key={node.requestId} data-request-id={node.requestId}>
              <td className="usage-table__time">
                <time dateTime={node.createdAt}>{formatTime(node.createdAt)}</time>
              </td>
              <td>
                <code>{node.model}</code>
                <span className={`tier tier--${node.class}`}>{classLabels[node.class]}</span>
                {node.stream && <span className="muted usage-table__note"> · stream</span>}
              </td>
              <td data-testid="request-produced">
                {node.unit && node.unitQuantity !== null ? unitLabels[node.unit](node.unitQuantity) : <span className="muted">text</span>}
              </td>
              <td className="num">
                {formatInteger(node.inputTokens)} → {formatInteger(node.outputTokens)}
                {node.estimated && (
                  <span className="badge badge--estimated" title="The model server reported no usage, so svc counted the tokens itself.">
                    estimated
                  </span>
                )}
              </td>
              <td className="num" data-testid="request-cost">
                {formatMoney(node.cost)}
              </td>
              <td>
                <span className={`status status--${node.status}`} title={statusHints[node.status]}>
                  {statusLabels[node.status]}
                </span>
              </td>
              <td className="num">{formatInteger(node.latencyMs)} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A request as people read it: its id shortened in lists, the credential that made it ("laptop …M7LM",
 * "CLI session"), and its story — one sentence saying how it went, then every fact the ledger kept. Used
 * by the member's `/account/usage/requests/:id` and staff's `/admin/requests/:id`.
 */
import type { ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { usePlanText } from '../../plan/components/plan-labels.ts';
import type { UsageRecordFragment } from '../graphql/usage-record.fragment.ts';

/** `mbr_` and the first eight characters: enough to tell requests apart in a list; the whole id on hover. */
export function ShortRequestId({ id }: { id: string }) {
  return (
    <code className="request-id" title={id}>
      {shortRequestId(id)}
    </code>
  );
}

/** What `ShortRequestId` shows: the start of a long id, then "…". */
export function shortRequestId(id: string): string {
  return id.length > 14 ? `${id.slice(0, 12)}…` : id;
}

const stages = ['auth', 'validation', 'rate_limit', 'quota', 'routing', 'upstream', 'stream', 'payment', 'internal'] as const;
type Stage = (typeof stages)[number];
/** Credentials that are not keys: named by their kind. */
const credentialKinds = ['web_session', 'session_token', 'mcp_token'] as const;

/** The key's name and last 4 (its kind and whether it is revoked), or which kind of session it was. */
export function CredentialLabel({ record }: { record: Pick<UsageRecordFragment, 'key' | 'credentialKind'> }) {
  const { t } = useTranslation('usage');
  const { key } = record;
  if (!key) {
    const kind = (credentialKinds as readonly string[]).includes(record.credentialKind) ? (record.credentialKind as (typeof credentialKinds)[number]) : null;
    return <span className="muted">{kind ? t(`request.credential.${kind}`) : t('request.credential.unknown')}</span>;
  }
  return (
    <span className="credential">
      <span className="credential__name">{key.name}</span> <code className="credential__last4">…{key.last4}</code>
      {key.revoked && <span className="muted credential__note"> {t('request.keyRevoked')}</span>}
    </span>
  );
}

/** One sentence on how the request went, in the reader's language. */
export function RequestSummary({ record }: { record: UsageRecordFragment }) {
  const { t } = useTranslation('usage');
  const format = useFormat();
  const stageName = useStageName();
  const values = {
    duration: format.seconds(record.durationSeconds),
    input: format.integer(record.inputTokens),
    output: format.integer(record.outputTokens),
    cost: format.money(record.cost),
    code: record.errorCode ?? '',
    stage: record.errorStage ? stageName(record.errorStage) : '',
  };
  switch (record.status) {
    case 'ok':
      return <>{t('request.summary.ok', values)}</>;
    case 'refunded':
      return <>{record.errorCode ? t('request.summary.refunded', values) : t('request.summary.refundedUnasked', values)}</>;
    case 'client_disconnected':
      return <>{t('request.summary.client_disconnected', values)}</>;
    case 'upstream_failed':
      return <>{record.errorCode ? t('request.summary.upstream_failed', values) : t('request.summary.upstreamFailedUnknown', values)}</>;
    case 'abandoned':
      return <>{t('request.summary.abandoned', values)}</>;
  }
}

/** A failure's stage in words ("the model server"); a stage this page does not know yet, as its code. */
export function useStageName(): (stage: string) => string {
  const { t } = useTranslation('usage');
  return (stage) => ((stages as readonly string[]).includes(stage) ? t(`request.stage.${stage as Stage}`) : stage);
}

/** Every fact the ledger kept about the request; `extra` facts (staff: who paid) come first. */
export function RequestFacts({ record, extra }: { record: UsageRecordFragment; extra?: ReactNode }) {
  const { t } = useTranslation('usage');
  const format = useFormat();
  const plan = usePlanText();
  const stageName = useStageName();
  return (
    <dl className="request-facts">
      {extra}
      <Fact label={t('request.facts.when')}>
        <time dateTime={record.createdAt}>{format.dateTime(record.createdAt)}</time>
      </Fact>
      <Fact label={t('request.facts.model')}>
        <code>{record.model}</code>
        {record.routedModel !== record.model && (
          <>
            {' → '}
            <code>{record.routedModel}</code>
          </>
        )}{' '}
        <span className={`tier tier--${record.class}`}>{plan.className(record.class)}</span>
      </Fact>
      <Fact label={t('request.facts.key')}>
        <CredentialLabel record={record} />
        {record.key && <span className="muted request-facts__note">{t(`request.keyKind.${record.key.kind}`)}</span>}
      </Fact>
      {record.clientIp && (
        <Fact label={t('request.facts.clientIp')}>
          <code data-testid="request-client-ip">{record.clientIp}</code>
        </Fact>
      )}
      <Fact label={t('request.facts.tokens')}>
        {t('history.tokens', { input: format.integer(record.inputTokens), output: format.integer(record.outputTokens) })}
        {record.estimated && <span className="badge badge--estimated">{t('history.estimated')}</span>}
      </Fact>
      {record.unit && record.unitQuantity !== null && <Fact label={t('request.facts.produced')}>{t(`history.produced.${record.unit}`, { count: record.unitQuantity })}</Fact>}
      <Fact label={t('request.facts.cost')}>
        <strong data-testid="request-detail-cost">{format.money(record.cost)}</strong>
      </Fact>
      <Fact label={t('request.facts.status')}>
        <span className={`status status--${record.status}`}>{t(`history.status.${record.status}`)}</span>
      </Fact>
      <Fact label={t('request.facts.refunded')}>
        <span data-testid="request-refunded">{record.refunded ? t('request.refundedYes') : t('request.refundedNo')}</span>
      </Fact>
      {record.errorCode && (
        <Fact label={t('request.facts.error')}>
          <code data-testid="request-error-code">{record.errorCode}</code>
          {record.errorStage && <span className="muted request-facts__note">{t('request.atStage', { stage: stageName(record.errorStage) })}</span>}
        </Fact>
      )}
      <Fact label={t('request.facts.duration')}>{format.seconds(record.durationSeconds)}</Fact>
      <Fact label={t('request.facts.delivery')}>{record.stream ? t('request.streamed') : t('request.whole')}</Fact>
      {record.upstreamStatus !== null && (
        <Fact label={t('request.facts.upstream')}>
          {record.deployment ? <Trans t={t} i18nKey="request.upstreamAt" values={{ status: record.upstreamStatus, deployment: record.deployment }} components={{ code: <code /> }} /> : `HTTP ${record.upstreamStatus}`}
        </Fact>
      )}
      {record.clientRequestId && (
        <Fact label={t('request.facts.clientRequestId')}>
          <code>{record.clientRequestId}</code>
        </Fact>
      )}
    </dl>
  );
}

export function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="request-facts__item">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

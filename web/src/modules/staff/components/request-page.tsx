/**
 * `/admin/requests/:id`: any account's request as support reads it when a member writes in with an
 * `mbr_…` id — how it went, every fact the ledger kept, and the account that paid.
 */
import { useQuery } from '@apollo/client/react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { Fact } from '../../usage/components/request-parts.tsx';
import { RequestStory } from '../../usage/components/request-page.tsx';
import '../../usage/components/usage.css';
import { STAFF_REQUEST_QUERY, type StaffRequest } from '../graphql/staff-request.query.ts';

export function StaffRequestPage() {
  const { t } = useTranslation(['staff', 'usage']);
  const { id = '' } = useParams();
  const { data, loading, error, refetch } = useQuery(STAFF_REQUEST_QUERY, { variables: { requestId: id }, notifyOnNetworkStatusChange: true });
  const record = data?.request;
  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('usage:request.title') })}</title>
      <p className="breadcrumb">
        {record?.payer ? <Link to={`/admin/accounts/${record.payer.id}`}>{payerName(record.payer)}</Link> : <Link to="/admin/accounts">{t('accounts.title')}</Link>}{' '}
        <span aria-hidden="true">/</span>
      </p>
      <header className="admin-head">
        <h1>{t('usage:request.title')}</h1>
      </header>
      {error && !data ? (
        <ErrorState title={t('usage:request.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('usage:request.loading')} />
      ) : !record ? (
        <EmptyState title={t('request.notFound')}>
          <p>
            <Trans t={t} i18nKey="request.notFoundHint" values={{ id }} components={{ code: <code />, search: <Link to="/admin/accounts" /> }} />
          </p>
        </EmptyState>
      ) : (
        <RequestStory record={record} extra={<PaidBy record={record} />} />
      )}
    </div>
  );
}

function PaidBy({ record }: { record: StaffRequest }) {
  const { t } = useTranslation('staff');
  if (!record.payer) return null;
  return (
    <Fact label={record.payer.kind === 'organisation' ? t('request.paidByOrganisation') : t('request.paidBy')}>
      <Link to={`/admin/accounts/${record.payer.id}`} data-testid="request-payer">
        {payerName(record.payer)}
      </Link>
    </Fact>
  );
}

function payerName(payer: NonNullable<StaffRequest['payer']>): string {
  return payer.kind === 'organisation' && payer.displayName ? payer.displayName : payer.email;
}

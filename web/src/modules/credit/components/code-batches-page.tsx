/**
 * `/admin/credit-codes`: admins mint batches of credit codes (value, how many, uses per code, expiry,
 * note) and download each batch as CSV; the list shows how many uses are left.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { EmptyState, ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { CREDIT_CODE_BATCHES_QUERY } from '../graphql/credit-code-batches.query.ts';
import { MINT_CREDIT_CODES } from '../graphql/mint-credit-codes.mutation.ts';
import './credit.css';

export function CodeBatchesPage() {
  const { t } = useTranslation('credit');
  const format = useFormat();
  const { data, loading, error, refetch } = useQuery(CREDIT_CODE_BATCHES_QUERY, { notifyOnNetworkStatusChange: true });
  const [mint, state] = useMutation(MINT_CREDIT_CODES);
  const [value, setValue] = useState('5');
  const [count, setCount] = useState('10');
  const [uses, setUses] = useState('1');
  const [expires, setExpires] = useState('');
  const [note, setNote] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const minted = await mint({
      variables: { value, count: Number(count), usesPerCode: Number(uses), expiresAt: expires ? new Date(`${expires}T23:59:59`).toISOString() : null, note: note || null },
    }).catch(() => null);
    if (minted?.data) void refetch().catch(() => undefined);
  };
  const batches = data?.creditCodeBatches;
  return (
    <div className="admin-page">
      <title>{t('staff.pageTitle')}</title>
      <header className="admin-head">
        <div>
          <h1>{t('staff.title')}</h1>
          <p className="muted admin-head__note">{t('staff.note')}</p>
        </div>
      </header>
      <form className="credit-card credits-mint" onSubmit={(event) => void submit(event)}>
        <label>
          {t('staff.value')}
          <input name="value" inputMode="decimal" value={value} onChange={(event) => setValue(event.target.value)} />
        </label>
        <label>
          {t('staff.count')}
          <input name="count" type="number" min={1} max={10000} value={count} onChange={(event) => setCount(event.target.value)} />
        </label>
        <label>
          {t('staff.uses')}
          <input name="uses" type="number" min={1} value={uses} onChange={(event) => setUses(event.target.value)} />
        </label>
        <label>
          {t('staff.expires')}
          <input name="expires" type="date" value={expires} onChange={(event) => setExpires(event.target.value)} />
        </label>
        <label>
          {t('staff.noteLabel')}
          <input name="note" value={note} onChange={(event) => setNote(event.target.value)} />
        </label>
        <button type="submit" className="button" disabled={state.loading}>
          {state.loading ? t('staff.minting') : t('staff.mint')}
        </button>
        <ProblemLine error={state.error} />
        {state.data && (
          <p role="status">
            {t('staff.minted', { count: state.data.mintCreditCodes.codes.length })}{' '}
            <a href={`/api/membership/credits/code-batches/${state.data.mintCreditCodes.batch.id}/codes.csv`}>{t('staff.download')}</a>
          </p>
        )}
      </form>
      {error ? (
        <ErrorState title={t('staff.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !batches ? (
        <LoadingState label={t('staff.loading')} />
      ) : batches.length === 0 ? (
        <EmptyState title={t('staff.empty')} />
      ) : (
        <table className="credits-entries">
          <thead>
            <tr>
              <th scope="col">{t('staff.created')}</th>
              <th scope="col" className="num">
                {t('staff.value')}
              </th>
              <th scope="col" className="num">
                {t('staff.count')}
              </th>
              <th scope="col" className="num">
                {t('staff.usesLeft')}
              </th>
              <th scope="col">{t('staff.expires')}</th>
              <th scope="col">{t('staff.noteLabel')}</th>
              <th scope="col">CSV</th>
            </tr>
          </thead>
          <tbody>
            {batches.map((batch) => (
              <tr key={batch.id}>
                <td>{format.dateTime(batch.createdAt)}</td>
                <td className="num">{format.money(batch.value)}</td>
                <td className="num">{format.integer(batch.codeCount)}</td>
                <td className="num">{format.integer(batch.usesLeft)}</td>
                <td>{batch.expiresAt ? format.dateTime(batch.expiresAt) : t('staff.never')}</td>
                <td>{batch.note ?? ''}</td>
                <td>
                  <a href={`/api/membership/credits/code-batches/${batch.id}/codes.csv`}>{t('staff.download')}</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

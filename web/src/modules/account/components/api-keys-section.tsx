/** Personal API keys: create (the token is shown once, with a copy button), list by prefix, revoke. */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { EmptyState, ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { API_KEYS_QUERY } from '../graphql/api-keys.query.ts';
import { CREATE_API_KEY } from '../graphql/create-api-key.mutation.ts';
import { REVOKE_API_KEY } from '../graphql/revoke-api-key.mutation.ts';
import { CopyButton } from './copy-button.tsx';

export function ApiKeysSection() {
  const { t } = useTranslation('account');
  const format = useFormat();
  const when = (iso: string | null) => (iso ? format.dateTime(iso) : t('never'));
  const id = useId();
  const { data, loading, error, refetch } = useQuery(API_KEYS_QUERY, { notifyOnNetworkStatusChange: true });
  const [create, createState] = useMutation(CREATE_API_KEY);
  const [revoke] = useMutation(REVOKE_API_KEY);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const [revoking, setRevoking] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    try {
      const result = await create({ variables: { name } });
      const minted = result.data!.createApiKey;
      setCreated({ token: minted.token, name: minted.key.name });
      setName('');
      await refetch();
    } catch (caught) {
      setProblem(caught);
    }
  };
  const remove = async (keyId: string, keyName: string) => {
    if (!window.confirm(t('keys.confirmRevoke', { name: keyName }))) return;
    setProblem(null);
    setRevoking(keyId);
    try {
      await revoke({ variables: { id: keyId } });
      await refetch();
    } catch (caught) {
      setProblem(caught);
    } finally {
      setRevoking(null);
    }
  };

  return (
    <section className="section" aria-labelledby={`${id}-heading`}>
      <div className="section__head">
        <h2 id={`${id}-heading`}>{t('keys.heading')}</h2>
        <p className="muted">
          <Trans t={t} i18nKey="keys.intro" components={{ code: <code /> }} />
        </p>
      </div>
      {created && (
        <div className="new-key" role="status">
          <p className="new-key__title">
            <Trans t={t} i18nKey="keys.created" values={{ name: created.name }} components={{ strong: <strong /> }} />
          </p>
          <div className="new-key__row">
            <code className="new-key__token" data-testid="new-key-token">
              {created.token}
            </code>
            <CopyButton value={created.token} />
          </div>
          <button type="button" className="button button--ghost" onClick={() => setCreated(null)}>
            {t('keys.copiedIt')}
          </button>
        </div>
      )}
      <form className="form form--inline" onSubmit={submit} aria-label={t('keys.createLabel')}>
        <label className="field" htmlFor={`${id}-name`}>
          <span>{t('keys.name')}</span>
          <input id={`${id}-name`} required maxLength={100} placeholder={t('keys.namePlaceholder')} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="submit" className="button" disabled={createState.loading}>
          {createState.loading ? t('keys.creating') : t('keys.create')}
        </button>
      </form>
      <ProblemLine error={problem} />
      {error ? (
        <ErrorState title={t('keys.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('keys.loading')} />
      ) : data.apiKeys.length === 0 ? (
        <EmptyState title={t('keys.empty')}>
          <p className="muted">{t('keys.emptyHint')}</p>
        </EmptyState>
      ) : (
        <div className="table-scroll">
          <table className="data-table">
            <thead>
              <tr>
                <th scope="col">{t('keys.columns.name')}</th>
                <th scope="col">{t('keys.columns.key')}</th>
                <th scope="col">{t('keys.columns.created')}</th>
                <th scope="col">{t('keys.columns.lastUsed')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('keys.columns.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.apiKeys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>
                      {key.prefix}…{key.last4}
                    </code>
                  </td>
                  <td>{when(key.createdAt)}</td>
                  <td>{when(key.lastUsedAt)}</td>
                  <td className="data-table__actions">
                    <button type="button" className="button button--ghost" disabled={revoking === key.id} onClick={() => void remove(key.id, key.name)}>
                      {revoking === key.id ? t('keys.revoking') : t('keys.revoke')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

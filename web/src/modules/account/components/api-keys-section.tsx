/**
 * Personal API keys: create (the token is shown once, with a copy button) with optional limits, list by
 * prefix with today's and this month's spend drawn against the key's caps, change a key's limits, revoke.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { EmptyState, ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { useRowAction } from '../../shell/hooks/use-row-action.ts';
import { API_KEYS_QUERY } from '../graphql/api-keys.query.ts';
import { CREATE_API_KEY } from '../graphql/create-api-key.mutation.ts';
import { REVOKE_API_KEY } from '../graphql/revoke-api-key.mutation.ts';
import { UPDATE_API_KEY } from '../graphql/update-api-key.mutation.ts';
import { KeyLimitFields, KeyLimitsEditor, KeyLimitSummary, KeySpend, limitsInput, useLimitDraft } from './key-limits.tsx';
import { KeyTable, NewKeyNotice } from './key-table.tsx';

export function ApiKeysSection() {
  const { t } = useTranslation('account');
  const format = useFormat();
  const when = (iso: string | null) => (iso ? format.dateTime(iso) : t('never'));
  const id = useId();
  const { data, loading, error, refetch } = useQuery(API_KEYS_QUERY, { notifyOnNetworkStatusChange: true });
  const [create, createState] = useMutation(CREATE_API_KEY);
  const [revoke] = useMutation(REVOKE_API_KEY);
  const [update] = useMutation(UPDATE_API_KEY);
  const [name, setName] = useState('');
  const [draft, setDraft] = useLimitDraft(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const [revoking, runOnRow] = useRowAction(setProblem);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    try {
      const result = await create({ variables: { name, limits: limitsInput(draft) } });
      const minted = result.data!.createApiKey;
      setCreated({ token: minted.token, name: minted.key.name });
      setName('');
      setDraft({ budgetDay: '', budgetMonth: '', rpm: '', models: '', expires: '' });
      await refetch();
    } catch (caught) {
      setProblem(caught);
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
        <NewKeyNotice
          title={<Trans t={t} i18nKey="keys.created" values={{ name: created.name }} components={{ strong: <strong /> }} />}
          token={created.token}
          testId="new-key-token"
          dismissLabel={t('keys.copiedIt')}
          onDismiss={() => setCreated(null)}
        />
      )}
      <form className="form form--inline" onSubmit={submit} aria-label={t('keys.createLabel')}>
        <label className="field" htmlFor={`${id}-name`}>
          <span>{t('keys.name')}</span>
          <input id={`${id}-name`} required maxLength={100} placeholder={t('keys.namePlaceholder')} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="submit" className="button" disabled={createState.loading}>
          {createState.loading ? t('keys.creating') : t('keys.create')}
        </button>
        <details className="key-limits-details">
          <summary>{t('keys.limits.optional')}</summary>
          <p className="muted">{t('keys.limits.hint')}</p>
          <KeyLimitFields draft={draft} onChange={setDraft} />
        </details>
      </form>
      <ProblemLine error={problem} />
      {editing && data?.apiKeys.find((key) => key.id === editing) && (
        <KeyLimitsEditor
          key={editing}
          name={data.apiKeys.find((key) => key.id === editing)!.name}
          limits={data.apiKeys.find((key) => key.id === editing)!.limits}
          onCancel={() => setEditing(null)}
          onSave={async (limits) => {
            setProblem(null);
            try {
              await update({ variables: { id: editing, limits } });
              setEditing(null);
              await refetch();
            } catch (caught) {
              setProblem(caught);
            }
          }}
        />
      )}
      {error ? (
        <ErrorState title={t('keys.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('keys.loading')} />
      ) : data.apiKeys.length === 0 ? (
        <EmptyState title={t('keys.empty')}>
          <p className="muted">{t('keys.emptyHint')}</p>
        </EmptyState>
      ) : (
        <KeyTable
          keys={data.apiKeys}
          text={{
            name: t('keys.columns.name'),
            key: t('keys.columns.key'),
            created: t('keys.columns.created'),
            lastUsed: t('keys.columns.lastUsed'),
            actions: t('keys.columns.actions'),
            revoke: t('keys.revoke'),
            revoking: t('keys.revoking'),
          }}
          extra={[
            { header: t('keys.columns.today'), cell: (key) => <KeySpend spent={key.limits.spentToday} cap={key.limits.budgetDay} label={t('keys.limits.todayMeter', { name: key.name })} /> },
            { header: t('keys.columns.month'), cell: (key) => <KeySpend spent={key.limits.spentThisMonth} cap={key.limits.budgetMonth} label={t('keys.limits.monthMeter', { name: key.name })} /> },
            { header: t('keys.columns.limits'), cell: (key) => <KeyLimitSummary limits={key.limits} /> },
          ]}
          created={(key) => when(key.createdAt)}
          lastUsed={(key) => when(key.lastUsedAt)}
          rowActions={(key) => (
            <button type="button" className="button button--ghost" onClick={() => setEditing(key.id)}>
              {t('keys.limits.edit')}
            </button>
          )}
          onRevoke={(key) =>
            void runOnRow(key.id, t('keys.confirmRevoke', { name: key.name }), async () => {
              await revoke({ variables: { id: key.id } });
              await refetch();
            })
          }
          revoking={revoking}
        />
      )}
    </section>
  );
}

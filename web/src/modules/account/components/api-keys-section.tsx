/** Personal API keys: create (the token is shown once, with a copy button), list by prefix, revoke. */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { API_KEYS_QUERY } from '../graphql/api-keys.query.ts';
import { CREATE_API_KEY } from '../graphql/create-api-key.mutation.ts';
import { REVOKE_API_KEY } from '../graphql/revoke-api-key.mutation.ts';
import { CopyButton } from './copy-button.tsx';
import { formatTime } from './format-time.ts';

export function ApiKeysSection() {
  const id = useId();
  const { data, loading, error, refetch } = useQuery(API_KEYS_QUERY, { notifyOnNetworkStatusChange: true });
  const [create, createState] = useMutation(CREATE_API_KEY);
  const [revoke] = useMutation(REVOKE_API_KEY);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
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
      setProblem((caught as Error).message);
    }
  };
  const remove = async (keyId: string, keyName: string) => {
    if (!window.confirm(`Revoke "${keyName}"? Programs using it stop working at once.`)) return;
    setProblem(null);
    setRevoking(keyId);
    try {
      await revoke({ variables: { id: keyId } });
      await refetch();
    } catch (caught) {
      setProblem((caught as Error).message);
    } finally {
      setRevoking(null);
    }
  };

  return (
    <section className="section" aria-labelledby={`${id}-heading`}>
      <div className="section__head">
        <h2 id={`${id}-heading`}>API keys</h2>
        <p className="muted">
          Use a key as <code>Authorization: Bearer svc_live_…</code> on <code>/v1</code>. Only its first 12 and last 4 characters are kept for
          this list.
        </p>
      </div>
      {created && (
        <div className="new-key" role="status">
          <p className="new-key__title">
            Your new key <strong>{created.name}</strong> — copy it now. It is not shown again.
          </p>
          <div className="new-key__row">
            <code className="new-key__token" data-testid="new-key-token">
              {created.token}
            </code>
            <CopyButton value={created.token} />
          </div>
          <button type="button" className="button button--ghost" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
      <form className="form form--inline" onSubmit={submit} aria-label="Create an API key">
        <label className="field" htmlFor={`${id}-name`}>
          <span>Key name</span>
          <input id={`${id}-name`} required maxLength={100} placeholder="e.g. laptop" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="submit" className="button" disabled={createState.loading}>
          {createState.loading ? 'Creating…' : 'Create key'}
        </button>
      </form>
      {problem && (
        <p className="form__error" role="alert">
          {problem}
        </p>
      )}
      {error ? (
        <ErrorState title="Your keys could not be loaded." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label="Loading your keys…" />
      ) : data.apiKeys.length === 0 ? (
        <EmptyState title="No API keys yet.">
          <p className="muted">Create one above to call the API from scripts and SDKs.</p>
        </EmptyState>
      ) : (
        <div className="table-scroll">
          <table className="data-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
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
                  <td>{formatTime(key.createdAt)}</td>
                  <td>{formatTime(key.lastUsedAt)}</td>
                  <td className="data-table__actions">
                    <button type="button" className="button button--ghost" disabled={revoking === key.id} onClick={() => void remove(key.id, key.name)}>
                      {revoking === key.id ? 'Revoking…' : 'Revoke'}
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

/**
 * The organisation's `svc_ent_` keys: mint one (the token is shown once, with a copy button), optionally
 * limited to a list of CIDRs; see each key's prefix, last four, when it was made and last used; revoke.
 */
import { useMutation } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { KeyTable, NewKeyNotice } from '../../account/components/key-table.tsx';
import { EmptyState, ProblemLine } from '../../shell/components/query-state.tsx';
import { useRowAction } from '../../shell/hooks/use-row-action.ts';
import { CREATE_ORGANISATION_KEY } from '../graphql/create-organisation-key.mutation.ts';
import type { OrganisationConsole } from '../graphql/organisation-console.query.ts';
import { REVOKE_ORGANISATION_KEY } from '../graphql/revoke-organisation-key.mutation.ts';

const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** A CIDR (or a single address) as the server accepts it: IPv4 with /0–32, IPv6 with /0–128. */
export function isCidr(value: string): boolean {
  const [address, prefix, extra] = value.split('/');
  if (extra !== undefined || !address) return false;
  const v6 = address.includes(':');
  if (v6 ? !/^[0-9a-fA-F:.]+$/.test(address) || (address.match(/::/g) ?? []).length > 1 : !ipv4.test(address)) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (v6 ? 128 : 32);
}

/** One CIDR a line, or separated by commas or spaces. */
export function parseCidrs(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter(Boolean);
}

export function KeysSection({ organisation }: { organisation: OrganisationConsole }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const id = useId();
  const refetch = { refetchQueries: ['OrganisationConsole'], awaitRefetchQueries: true };
  const [create, creating] = useMutation(CREATE_ORGANISATION_KEY, refetch);
  const [revoke] = useMutation(REVOKE_ORGANISATION_KEY, refetch);
  const [name, setName] = useState('');
  const [cidrText, setCidrText] = useState('');
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const [local, setLocal] = useState<'nameRequired' | 'badCidr' | null>(null);
  const [badCidrs, setBadCidrs] = useState<string[]>([]);
  const [revoking, runOnRow] = useRowAction(setProblem);
  const manage = organisation.viewerCanManageKeys;
  // The connection counts are pushed live; a key's stored last use may trail them by a flush.
  const lastUsed = (keyId: string, stored: string | null) =>
    organisation.connections
      .filter((connection) => connection.keyId === keyId)
      .map((connection) => connection.lastSeenAt)
      .reduce<string | null>((latest, seen) => (latest === null || Date.parse(seen) > Date.parse(latest) ? seen : latest), stored);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    setLocal(null);
    if (name.trim() === '') {
      setLocal('nameRequired');
      return;
    }
    const cidrs = parseCidrs(cidrText);
    const bad = cidrs.filter((cidr) => !isCidr(cidr));
    if (bad.length > 0) {
      setBadCidrs(bad);
      setLocal('badCidr');
      return;
    }
    try {
      const result = await create({ variables: { organisationId: organisation.id, name: name.trim(), allowedCidrs: cidrs } });
      const minted = result.data!.createOrganisationKey;
      setCreated({ token: minted.token, name: minted.key.name });
      setName('');
      setCidrText('');
    } catch (caught) {
      setProblem(caught);
    }
  };
  const lastUsedText = (iso: string | null) => (iso ? format.dateTime(iso) : <span className="muted">{t('never')}</span>);

  return (
    <section className="section console-section" aria-labelledby={`${id}-heading`}>
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
          testId="new-org-key-token"
          dismissLabel={t('keys.copiedIt')}
          onDismiss={() => setCreated(null)}
        />
      )}
      {manage && (
        <form className="key-form" onSubmit={(event) => void submit(event)} noValidate aria-label={t('keys.createLabel')}>
          <label className="field" htmlFor={`${id}-name`}>
            <span>{t('keys.name')}</span>
            <input
              id={`${id}-name`}
              maxLength={100}
              placeholder={t('keys.namePlaceholder')}
              value={name}
              aria-invalid={local === 'nameRequired'}
              onChange={(event) => setName(event.target.value)}
            />
          </label>
          <label className="field" htmlFor={`${id}-cidrs`}>
            <span>
              {t('keys.allowList')}
            <span className="muted optional-mark">{t('form.optional')}</span>
            </span>
            <textarea
              id={`${id}-cidrs`}
              rows={2}
              value={cidrText}
              placeholder="203.0.113.0/24"
              aria-invalid={local === 'badCidr'}
              aria-describedby={`${id}-cidrs-hint`}
              onChange={(event) => setCidrText(event.target.value)}
            />
            <span id={`${id}-cidrs-hint`} className="field__hint">
              <Trans t={t} i18nKey="keys.allowListHint" components={{ code: <code /> }} />
            </span>
          </label>
          <div className="key-form__submit">
            <button type="submit" className="button" disabled={creating.loading}>
              {creating.loading ? t('keys.creating') : t('keys.create')}
            </button>
          </div>
        </form>
      )}
      {local === 'nameRequired' && (
        <p className="form__error" role="alert">
          {t('keys.nameRequired')}
        </p>
      )}
      {local === 'badCidr' && (
        <p className="form__error" role="alert">
          {t('keys.badCidr', { count: badCidrs.length, entries: format.list(badCidrs) })}
        </p>
      )}
      <ProblemLine error={problem} />
      {organisation.keys.length === 0 ? (
        <EmptyState title={t('keys.empty')}>
          <p className="muted">{manage ? t('keys.emptyHint') : t('keys.emptyHintReadOnly')}</p>
        </EmptyState>
      ) : (
        <KeyTable
          keys={organisation.keys}
          className="data-table console-table"
          dateClassName="nowrap"
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
            {
              header: t('keys.columns.allowList'),
              cell: (key) =>
                key.allowedCidrs.length === 0 ? (
                  <span className="muted">{t('keys.anywhere')}</span>
                ) : (
                  <span className="cidrs">
                    {key.allowedCidrs.map((cidr) => (
                      <code key={cidr}>{cidr}</code>
                    ))}
                  </span>
                ),
            },
          ]}
          created={(key) => format.dateTime(key.createdAt)}
          lastUsed={(key) => lastUsedText(lastUsed(key.id, key.lastUsedAt))}
          onRevoke={
            manage
              ? (key) =>
                  void runOnRow(key.id, t('keys.confirmRevoke', { name: key.name, organisation: organisation.name }), () =>
                    revoke({ variables: { id: key.id, organisationId: organisation.id } }),
                  )
              : undefined
          }
          revoking={revoking}
        />
      )}
    </section>
  );
}

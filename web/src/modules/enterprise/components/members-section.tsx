/**
 * Who belongs to the organisation and in which role, and who is invited. The owner adds people by email
 * (an email without an svc account is invited, and joins when it signs up), removes them, and cancels
 * invitations.
 */
import { useMutation } from '@apollo/client/react';
import { useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { ProblemLine } from '../../shell/components/query-state.tsx';
import { useRowAction } from '../../shell/hooks/use-row-action.ts';
import { INVITE_ORGANISATION_MEMBER, type InvitationRole } from '../graphql/invite-organisation-member.mutation.ts';
import type { OrganisationConsole } from '../graphql/organisation-console.query.ts';
import type { OrganisationRole } from '../graphql/organisation.fragment.ts';
import { REMOVE_ORGANISATION_MEMBER } from '../graphql/remove-organisation-member.mutation.ts';
import { SET_ORGANISATION_MEMBER_ROLE } from '../graphql/set-organisation-member-role.mutation.ts';

export function MembersSection({ organisation }: { organisation: OrganisationConsole }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const id = useId();
  const refetch = { refetchQueries: ['OrganisationConsole'], awaitRefetchQueries: true };
  const [add, adding] = useMutation(INVITE_ORGANISATION_MEMBER, refetch);
  const [remove] = useMutation(REMOVE_ORGANISATION_MEMBER, refetch);
  // Handing ownership over changes what the viewer may do: the organisation list asks again too.
  const [setMemberRole] = useMutation(SET_ORGANISATION_MEMBER_ROLE, { refetchQueries: ['OrganisationConsole', 'Organisations'], awaitRefetchQueries: true });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<InvitationRole>('member');
  const [problem, setProblem] = useState<unknown>(null);
  const [emailProblem, setEmailProblem] = useState(false);
  const [added, setAdded] = useState<{ email: string; invited: boolean } | null>(null);
  const [removing, runOnRow] = useRowAction(setProblem);
  const manage = organisation.viewerCanManageMembers;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    setAdded(null);
    const address = email.trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) {
      setEmailProblem(true);
      return;
    }
    setEmailProblem(false);
    try {
      const result = await add({ variables: { organisationId: organisation.id, email: address, role } });
      setAdded({ email: address, invited: Boolean(result.data?.inviteOrganisationMember.invitation) });
      setEmail('');
    } catch (caught) {
      setProblem(caught);
    }
  };
  const changeRole = (accountId: string, memberEmail: string, next: OrganisationRole) =>
    runOnRow(accountId, next === 'owner' ? t('members.confirmOwner', { email: memberEmail, organisation: organisation.name }) : null, () =>
      setMemberRole({ variables: { organisationId: organisation.id, accountId, role: next } }),
    );
  // An invitation is cancelled through the same mutation, by its id.
  const onRemove = (accountId: string, memberEmail: string, invitation = false) =>
    runOnRow(
      accountId,
      invitation ? t('members.confirmCancel', { email: memberEmail }) : t('members.confirmRemove', { email: memberEmail, organisation: organisation.name }),
      () => remove({ variables: { organisationId: organisation.id, accountId } }),
    );

  return (
    <section className="section console-section" aria-labelledby={`${id}-heading`}>
      <div className="section__head">
        <h2 id={`${id}-heading`}>{t('members.heading')}</h2>
        <p className="muted">{t('members.intro')}</p>
      </div>
      {manage && (
        <form className="member-form" onSubmit={(event) => void submit(event)} noValidate aria-label={t('members.addLabel')}>
          <label className="field" htmlFor={`${id}-email`}>
            <span>{t('members.email')}</span>
            <input
              id={`${id}-email`}
              type="email"
              value={email}
              placeholder={t('members.emailPlaceholder')}
              aria-invalid={emailProblem}
              onChange={(event) => setEmail(event.target.value)}
            />
          </label>
          <label className="field" htmlFor={`${id}-role`}>
            <span>{t('members.role')}</span>
            <select id={`${id}-role`} value={role} onChange={(event) => setRole(event.target.value as InvitationRole)}>
              <option value="member">{t('role.member')}</option>
              <option value="admin">{t('role.admin')}</option>
            </select>
          </label>
          <button type="submit" className="button" disabled={adding.loading}>
            {adding.loading ? t('members.adding') : t('members.add')}
          </button>
        </form>
      )}
      {manage && <p className="field__hint">{t('members.roleHint')}</p>}
      {emailProblem && (
        <p className="form__error" role="alert">
          {t('members.emailInvalid')}
        </p>
      )}
      {added && (
        <p className="notice" role="status">
          {added.invited ? t('members.invited', { email: added.email }) : t('members.added', { email: added.email })}
        </p>
      )}
      <ProblemLine error={problem} />
      <div className="table-scroll">
        <table className="data-table console-table">
          <thead>
            <tr>
              <th scope="col">{t('members.columns.email')}</th>
              <th scope="col">{t('members.columns.role')}</th>
              <th scope="col">{t('members.columns.added')}</th>
              {manage && (
                <th scope="col">
                  <span className="visually-hidden">{t('members.columns.actions')}</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {organisation.members.map((member) => (
              <tr key={member.accountId}>
                <td>{member.email}</td>
                <td>
                  {manage && member.role !== 'owner' ? (
                    <select
                      className="role-select"
                      aria-label={t('members.roleOf', { email: member.email })}
                      value={member.role}
                      disabled={removing === member.accountId}
                      onChange={(event) => void changeRole(member.accountId, member.email, event.target.value as OrganisationRole)}
                    >
                      <option value="member">{t('role.member')}</option>
                      <option value="admin">{t('role.admin')}</option>
                      <option value="owner">{t('members.makeOwner')}</option>
                    </select>
                  ) : (
                    <span className={`org-role org-role--${member.role}`}>{t(`role.${member.role}`)}</span>
                  )}
                </td>
                <td className="nowrap">{format.dateTime(member.joinedAt)}</td>
                {manage && (
                  <td className="data-table__actions">
                    {member.role !== 'owner' && (
                      <button
                        type="button"
                        className="button button--ghost"
                        disabled={removing === member.accountId}
                        onClick={() => void onRemove(member.accountId, member.email)}
                      >
                        {removing === member.accountId ? t('members.removing') : t('members.remove')}
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
            {organisation.invitations.map((invitation) => (
              <tr key={invitation.id} className="console-table__invited">
                <td>
                  {invitation.email} <span className="badge badge--muted">{t('members.invitedLabel')}</span>
                </td>
                <td>
                  <span className={`org-role org-role--${invitation.role}`}>{t(`role.${invitation.role}`)}</span>
                </td>
                <td className="nowrap muted">{t('members.invitedOn', { time: format.dateTime(invitation.invitedAt) })}</td>
                {manage && (
                  <td className="data-table__actions">
                    <button
                      type="button"
                      className="button button--ghost"
                      disabled={removing === invitation.id}
                      onClick={() => void onRemove(invitation.id, invitation.email, true)}
                    >
                      {removing === invitation.id ? t('members.removing') : t('members.cancelInvite')}
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

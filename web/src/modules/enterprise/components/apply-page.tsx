/**
 * `/enterprise/apply`: the application form, then the application's state and timeline, live. A
 * commercial application is approved on submit (the organisation exists at once); an enterprise one waits
 * for staff, and the page turns when they decide — pushed by `enterpriseApplicationChanged`, no reload.
 * While it waits, the applicant may withdraw it.
 */
import { CombinedGraphQLErrors } from '@apollo/client/errors';
import { useMutation } from '@apollo/client/react';
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { SignedIn, SignInPrompt } from '../../shell/components/signed-in.tsx';
import type { EnterpriseApplicationFragment, EnterpriseApplicationKind } from '../graphql/enterprise-application.fragment.ts';
import { MY_ENTERPRISE_APPLICATIONS_QUERY } from '../graphql/my-enterprise-applications.query.ts';
import { SUBMIT_ENTERPRISE_APPLICATION } from '../graphql/submit-enterprise-application.mutation.ts';
import { WITHDRAW_ENTERPRISE_APPLICATION } from '../graphql/withdraw-enterprise-application.mutation.ts';
import { useCountries } from '../hooks/use-countries.ts';
import { useMyApplications } from '../hooks/use-my-applications.ts';
import { ApplicationFacts, ApplicationStateBadge, ApplicationTimeline } from './application-parts.tsx';
import '../../account/components/account.css';
import './enterprise.css';

export function ApplyPage() {
  const { t } = useTranslation(['enterprise', 'shell']);
  return (
    <div className="container page enterprise-page">
      <title>{t('shell:pageTitle', { page: t('apply.title') })}</title>
      <header className="page-header">
        <p className="eyebrow">{t('eyebrow')}</p>
        <h1>{t('apply.title')}</h1>
        <p className="lead">
          <Trans t={t} i18nKey="apply.lead" components={{ docs: <Link to="/docs/enterprise" /> }} />
        </p>
      </header>
      <SignedIn loadError={t('loadError')} loadingLabel={t('checkingSession')} signedOut={<SignInFirst />}>
        {(me) => <Applications email={me.email} />}
      </SignedIn>
    </div>
  );
}

export function SignInFirst() {
  const { t } = useTranslation('enterprise');
  return (
    <SignInPrompt title={t('signIn.title')} body={t('signIn.body')} action={t('signIn.action')} />
  );
}

function Applications({ email }: { email: string }) {
  const { t } = useTranslation('enterprise');
  const { data, loading, error, refetch, live } = useMyApplications();
  const [applyAgain, setApplyAgain] = useState(false);
  if (error && !data) return <ErrorState title={t('apply.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('apply.loading')} />;
  const applications = data.myEnterpriseApplications;
  const pending = applications.find((application) => application.state === 'pending_review');
  const latest = pending ?? applications[0];
  const earlier = applications.filter((application) => application !== latest);
  const showForm = !pending && (!latest || applyAgain);
  return (
    <>
      {live === 'interrupted' && (
        <p className="notice notice--warn" role="status">
          {t('apply.liveInterrupted')}
        </p>
      )}
      {latest && <ApplicationCard application={latest} />}
      {!pending && latest && !applyAgain && (
        <div className="actions">
          <button type="button" className="button button--ghost" onClick={() => setApplyAgain(true)}>
            {latest.state === 'approved' ? t('apply.another') : t('apply.again')}
          </button>
        </div>
      )}
      {showForm && <ApplicationForm email={email} onSubmitted={() => setApplyAgain(false)} />}
      {earlier.length > 0 && (
        <section className="section" aria-labelledby="earlier-applications">
          <h2 id="earlier-applications">{t('apply.earlier')}</h2>
          <EarlierApplications applications={earlier} />
        </section>
      )}
    </>
  );
}

function ApplicationCard({ application }: { application: EnterpriseApplicationFragment }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const [withdraw, withdrawing] = useMutation(WITHDRAW_ENTERPRISE_APPLICATION);
  const [problem, setProblem] = useState<unknown>(null);
  const id = useId();
  const onWithdraw = async () => {
    if (!window.confirm(t('status.confirmWithdraw', { organisation: application.organisation }))) return;
    setProblem(null);
    try {
      await withdraw({ variables: { id: application.id } });
    } catch (caught) {
      setProblem(caught);
    }
  };
  return (
    <section className={`app-card app-card--${application.state}`} aria-labelledby={`${id}-title`} data-application={application.id}>
      <header className="app-card__head">
        <div>
          <h2 id={`${id}-title`}>{application.organisation}</h2>
          <p className="muted">
            {t('status.submitted', { kind: t(`kind.${application.kind}.name`), time: format.dateTime(application.submittedAt) })}
          </p>
        </div>
        <ApplicationStateBadge state={application.state} />
      </header>
      <div className="app-card__message" role="status">
        <StatusMessage application={application} note={application.decisionNote} />
      </div>
      {application.state === 'pending_review' && (
        <div className="actions app-card__actions">
          <button type="button" className="button button--ghost" onClick={() => void onWithdraw()} disabled={withdrawing.loading}>
            {withdrawing.loading ? t('status.withdrawing') : t('status.withdraw')}
          </button>
        </div>
      )}
      {application.state === 'approved' && (
        <div className="actions app-card__actions">
          <Link className="button" to={application.organisationId ? `/enterprise/console?org=${application.organisationId}` : '/enterprise/console'}>
            {t('status.openConsole')}
          </Link>
        </div>
      )}
      <ProblemLine error={problem} />
      <div className="app-card__columns">
        <div>
          <h3>{t('status.timeline')}</h3>
          <ApplicationTimeline events={application.timeline} viewer="applicant" />
        </div>
        <div>
          <h3>{t('status.submittedDetails')}</h3>
          <ApplicationFacts application={application} />
        </div>
      </div>
    </section>
  );
}

function StatusMessage({ application, note }: { application: EnterpriseApplicationFragment; note: string | null }): ReactNode {
  const { t } = useTranslation('enterprise');
  switch (application.state) {
    case 'pending_review':
      return (
        <>
          <p className="app-card__headline">{t('status.pending.title')}</p>
          <p>{t('status.pending.body')}</p>
        </>
      );
    case 'approved':
      return (
        <>
          <p className="app-card__headline">{application.autoApproved ? t('status.approved.autoTitle') : t('status.approved.title')}</p>
          <p>{t('status.approved.body')}</p>
          {note && !application.autoApproved && <p className="app-card__note">{t('status.approved.note', { note })}</p>}
        </>
      );
    case 'rejected':
      return (
        <>
          <p className="app-card__headline">{t('status.rejected.title')}</p>
          {note && <p className="app-card__note">{t('status.rejected.reason', { reason: note })}</p>}
          <p>{t('status.rejected.body')}</p>
        </>
      );
    case 'withdrawn':
      return (
        <>
          <p className="app-card__headline">{t('status.withdrawn.title')}</p>
          <p>{t('status.withdrawn.body')}</p>
        </>
      );
  }
}

function EarlierApplications({ applications }: { applications: EnterpriseApplicationFragment[] }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  return (
    <div className="table-scroll">
      <table className="data-table">
        <thead>
          <tr>
            <th scope="col">{t('fields.organisation')}</th>
            <th scope="col">{t('fields.kind')}</th>
            <th scope="col">{t('apply.columns.submitted')}</th>
            <th scope="col">{t('apply.columns.state')}</th>
          </tr>
        </thead>
        <tbody>
          {applications.map((application) => (
            <tr key={application.id}>
              <td>{application.organisation}</td>
              <td>{t(`kind.${application.kind}.name`)}</td>
              <td>{format.dateTime(application.submittedAt)}</td>
              <td>
                <ApplicationStateBadge state={application.state} />
                {application.state === 'approved' && application.organisationId && (
                  <>
                    {' '}
                    <Link to={`/enterprise/console?org=${application.organisationId}`}>{t('status.openConsole')}</Link>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface Draft {
  kind: EnterpriseApplicationKind | '';
  organisation: string;
  contactEmail: string;
  website: string;
  country: string;
  useCase: string;
  expectedMonthlyTokens: string;
}

type Field = Exclude<keyof Draft, never>;
type Problems = Partial<Record<Field, string>>;

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The same rules the server applies, checked first so people see every problem at once, next to its field. */
function validate(draft: Draft): Problems {
  const problems: Problems = {};
  const organisation = draft.organisation.trim().replace(/\s+/g, ' ');
  if (organisation.length === 0) problems.organisation = 'organisationRequired';
  else if (organisation.length < 2 || organisation.length > 200) problems.organisation = 'organisationLength';
  if (!draft.kind) problems.kind = 'kindRequired';
  if (draft.contactEmail.trim() === '') problems.contactEmail = 'contactEmailRequired';
  else if (!emailPattern.test(draft.contactEmail.trim())) problems.contactEmail = 'contactEmailInvalid';
  const website = draft.website.trim();
  if (website !== '') {
    // As the server reads it: an address without a scheme is taken as https://.
    try {
      const url = new URL(/^https?:\/\//i.test(website) ? website : `https://${website}`);
      if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname.includes('.') || website.length > 500) problems.website = 'websiteInvalid';
    } catch {
      problems.website = 'websiteInvalid';
    }
  }
  if (!draft.country) problems.country = 'countryRequired';
  const useCase = draft.useCase.trim();
  if (useCase.length === 0) problems.useCase = 'useCaseRequired';
  else if (useCase.length < 10) problems.useCase = 'useCaseShort';
  else if (useCase.length > 5000) problems.useCase = 'useCaseLong';
  const tokens = draft.expectedMonthlyTokens.replace(/[\s,_]/g, '');
  if (tokens === '') problems.expectedMonthlyTokens = 'tokensRequired';
  else if (!/^\d+$/.test(tokens) || Number(tokens) < 1 || Number(tokens) > 1e15) problems.expectedMonthlyTokens = 'tokensInvalid';
  return problems;
}

// The order the fields appear in, so the first problem focused is the first one seen.
/** The server's per-field problems (`extensions.fieldErrors` of an `invalid_request`), by field. */
function fieldErrorsOf(error: unknown): Partial<Record<Field, { message: string; messageZh: string }>> {
  const found: Partial<Record<Field, { message: string; messageZh: string }>> = {};
  if (!CombinedGraphQLErrors.is(error)) return found;
  for (const entry of error.errors) {
    const list = entry.extensions?.fieldErrors;
    if (!Array.isArray(list)) continue;
    for (const item of list as { param?: unknown; message?: unknown; messageZh?: unknown }[]) {
      if (typeof item.param === 'string' && (fieldOrder as string[]).includes(item.param) && typeof item.message === 'string') {
        found[item.param as Field] ??= { message: item.message, messageZh: typeof item.messageZh === 'string' ? item.messageZh : item.message };
      }
    }
  }
  return found;
}

const fieldOrder: Field[] = ['kind', 'organisation', 'contactEmail', 'website', 'country', 'expectedMonthlyTokens', 'useCase'];

function ApplicationForm({ email, onSubmitted }: { email: string; onSubmitted(): void }) {
  const { t, i18n } = useTranslation('enterprise');
  const format = useFormat();
  const countries = useCountries();
  const id = useId();
  const [submit, submitting] = useMutation(SUBMIT_ENTERPRISE_APPLICATION, {
    update: (cache, { data }) => {
      const created = data?.submitEnterpriseApplication;
      if (!created) return;
      cache.updateQuery({ query: MY_ENTERPRISE_APPLICATIONS_QUERY }, (previous) =>
        previous && !previous.myEnterpriseApplications.some((application) => application.id === created.id)
          ? { myEnterpriseApplications: [created, ...previous.myEnterpriseApplications] }
          : previous,
      );
      // A commercial application makes an organisation at once: the console asks again.
      cache.evict({ fieldName: 'organisations' });
    },
  });
  const [draft, setDraft] = useState<Draft>({ kind: '', organisation: '', contactEmail: email, website: '', country: '', useCase: '', expectedMonthlyTokens: '' });
  const [tried, setTried] = useState(false);
  const [problem, setProblem] = useState<unknown>(null);
  // What the server said about each field, when it disagreed with the checks here (shown in the reader's language).
  const [serverProblems, setServerProblems] = useState<Partial<Record<Field, { message: string; messageZh: string }>>>({});
  const problems = tried ? validate(draft) : {};
  const set = (field: Field) => (value: string) => setDraft((previous) => ({ ...previous, [field]: value }));
  const tokens = Number(draft.expectedMonthlyTokens.replace(/[\s,_]/g, ''));

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setTried(true);
    setProblem(null);
    setServerProblems({});
    const found = validate(draft);
    const first = fieldOrder.find((field) => found[field]);
    if (first) {
      document.getElementById(`${id}-${first}`)?.focus();
      return;
    }
    try {
      await submit({
        variables: {
          input: {
            kind: draft.kind as EnterpriseApplicationKind,
            organisation: draft.organisation.trim(),
            contactEmail: draft.contactEmail.trim(),
            website: draft.website.trim() || null,
            country: draft.country,
            useCase: draft.useCase.trim(),
            expectedMonthlyTokens: tokens,
          },
        },
      });
      onSubmitted();
    } catch (caught) {
      const fields = fieldErrorsOf(caught);
      setServerProblems(fields);
      if (Object.keys(fields).length === 0) setProblem(caught);
    }
  };

  const error = (field: Field) => {
    const server = serverProblems[field];
    if (!problems[field] && !server) return null;
    return (
      <span id={`${id}-${field}-error`} className="field__error" role="alert">
        {problems[field] ? (
          <Trans t={t} i18nKey={`form.problems.${problems[field]}` as 'form.problems.organisationRequired'} components={{ code: <code /> }} />
        ) : (
          (i18n.language === 'zh-CN' ? server!.messageZh : server!.message)
        )}
      </span>
    );
  };
  const described = (field: Field, hint = true) =>
    [hint ? `${id}-${field}-hint` : null, problems[field] || serverProblems[field] ? `${id}-${field}-error` : null].filter(Boolean).join(' ') || undefined;

  return (
    <form className="app-form" onSubmit={(event) => void onSubmit(event)} noValidate aria-label={t('form.label')}>
      <h2>{t('form.heading')}</h2>
      <fieldset className={problems.kind ? 'kind-choice kind-choice--invalid' : 'kind-choice'} aria-describedby={described('kind', false)}>
        <legend>{t('fields.kind')}</legend>
        {(['commercial', 'enterprise'] as const).map((kind) => (
          <label key={kind} className={draft.kind === kind ? 'kind-option kind-option--checked' : 'kind-option'}>
            <input
              type="radio"
              name={`${id}-kind`}
              id={kind === 'commercial' ? `${id}-kind` : undefined}
              value={kind}
              checked={draft.kind === kind}
              onChange={() => set('kind')(kind)}
            />
            <span className="kind-option__text">
              <strong>{t(`kind.${kind}.name`)}</strong>
              <span>{t(`kind.${kind}.body`)}</span>
              <span className="muted">{t(`kind.${kind}.review`)}</span>
            </span>
          </label>
        ))}
        {error('kind')}
      </fieldset>
      <div className="app-form__grid">
        <label className="field" htmlFor={`${id}-organisation`}>
          <span>{t('fields.organisation')}</span>
          <input
            id={`${id}-organisation`}
            value={draft.organisation}
            maxLength={200}
            autoComplete="organization"
            aria-invalid={Boolean(problems.organisation)}
            aria-describedby={described('organisation')}
            onChange={(event) => set('organisation')(event.target.value)}
          />
          <span id={`${id}-organisation-hint`} className="field__hint">
            {t('form.hints.organisation')}
          </span>
          {error('organisation')}
        </label>
        <label className="field" htmlFor={`${id}-contactEmail`}>
          <span>{t('fields.contactEmail')}</span>
          <input
            id={`${id}-contactEmail`}
            type="email"
            value={draft.contactEmail}
            autoComplete="email"
            aria-invalid={Boolean(problems.contactEmail)}
            aria-describedby={described('contactEmail')}
            onChange={(event) => set('contactEmail')(event.target.value)}
          />
          <span id={`${id}-contactEmail-hint`} className="field__hint">
            {t('form.hints.contactEmail')}
          </span>
          {error('contactEmail')}
        </label>
        <label className="field" htmlFor={`${id}-website`}>
          <span>
            {t('fields.website')}
            <span className="muted optional-mark">{t('form.optional')}</span>
          </span>
          <input
            id={`${id}-website`}
            type="url"
            value={draft.website}
            autoComplete="url"
            aria-invalid={Boolean(problems.website)}
            aria-describedby={described('website')}
            onChange={(event) => set('website')(event.target.value)}
          />
          <span id={`${id}-website-hint`} className="field__hint">
            {t('form.hints.website')}
          </span>
          {error('website')}
        </label>
        <label className="field" htmlFor={`${id}-country`}>
          <span>{t('fields.country')}</span>
          <select
            id={`${id}-country`}
            value={draft.country}
            aria-invalid={Boolean(problems.country)}
            aria-describedby={described('country')}
            onChange={(event) => set('country')(event.target.value)}
          >
            <option value="">{t('form.chooseCountry')}</option>
            {countries.map((country) => (
              <option key={country.code} value={country.code}>
                {country.name}
              </option>
            ))}
          </select>
          <span id={`${id}-country-hint`} className="field__hint">
            {t('form.hints.country')}
          </span>
          {error('country')}
        </label>
        <label className="field" htmlFor={`${id}-expectedMonthlyTokens`}>
          <span>{t('fields.expectedMonthlyTokens')}</span>
          <input
            id={`${id}-expectedMonthlyTokens`}
            inputMode="numeric"
            value={draft.expectedMonthlyTokens}
            placeholder="50000000"
            aria-invalid={Boolean(problems.expectedMonthlyTokens)}
            aria-describedby={described('expectedMonthlyTokens')}
            onChange={(event) => set('expectedMonthlyTokens')(event.target.value)}
          />
          <span id={`${id}-expectedMonthlyTokens-hint`} className="field__hint">
            {Number.isSafeInteger(tokens) && tokens > 0
              ? t('form.hints.tokensRead', { tokens: format.compact(tokens) })
              : t('form.hints.expectedMonthlyTokens')}
          </span>
          {error('expectedMonthlyTokens')}
        </label>
        <label className="field app-form__wide" htmlFor={`${id}-useCase`}>
          <span>{t('fields.useCase')}</span>
          <textarea
            id={`${id}-useCase`}
            value={draft.useCase}
            rows={5}
            maxLength={5000}
            aria-invalid={Boolean(problems.useCase)}
            aria-describedby={described('useCase')}
            onChange={(event) => set('useCase')(event.target.value)}
          />
          <span id={`${id}-useCase-hint`} className="field__hint">
            {t('form.hints.useCase')}
          </span>
          {error('useCase')}
        </label>
      </div>
      {tried && Object.keys(problems).length > 0 && (
        <p className="form__error" role="alert">
          {t('form.fixProblems', { count: Object.keys(problems).length })}
        </p>
      )}
      <ProblemLine error={problem} />
      <div className="actions">
        <button type="submit" className="button" disabled={submitting.loading}>
          {submitting.loading ? t('form.submitting') : draft.kind === 'commercial' ? t('form.submitCommercial') : t('form.submit')}
        </button>
      </div>
    </form>
  );
}

/**
 * `/admin/applications/:id`: one application for review — everything submitted, its timeline with notes,
 * the applicant's account (age, plan, this month's usage, their other applications) — and the decision:
 * approve (optional note, optional package) or reject (reason required, shown to the applicant). Another
 * reviewer's decision arrives live through `enterpriseApplicationChanged`, which Apollo merges into the
 * application shown (same id), so nobody decides twice on a stale page.
 */
import type { ApolloCache } from '@apollo/client';
import { useMutation, useQuery, useSubscription } from '@apollo/client/react';
import { useId, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { ApplicationFacts, ApplicationStateBadge, ApplicationTimeline } from '../../enterprise/components/application-parts.tsx';
import '../../enterprise/components/enterprise.css';
import { ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION } from '../../enterprise/graphql/enterprise-application-changed.subscription.ts';
import { usePlanText } from '../../plan/components/plan-labels.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { ASSIGNABLE_PLANS_QUERY } from '../graphql/assignable-plans.query.ts';
import { APPROVE_ENTERPRISE_APPLICATION } from '../graphql/approve-enterprise-application.mutation.ts';
import { ENTERPRISE_APPLICATION_QUERY, type ApplicationDetail } from '../graphql/enterprise-application.query.ts';
import { REJECT_ENTERPRISE_APPLICATION } from '../graphql/reject-enterprise-application.mutation.ts';
import { useStaffViewer } from '../hooks/use-staff-viewer.ts';
import { AccountStatus, PackageBadge } from './account-badges.tsx';
import { ActionDialog } from './action-dialog.tsx';
import { AdminSection } from './admin-section.tsx';

export function ApplicationDetailPage() {
  const { t } = useTranslation(['enterprise', 'staff']);
  const { id = '' } = useParams();
  const { data, loading, error, refetch } = useQuery(ENTERPRISE_APPLICATION_QUERY, { variables: { id }, notifyOnNetworkStatusChange: true });
  // Keeps this application (and the queue's cache) current while the page is open.
  useSubscription(ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION);
  const [decided, setDecided] = useState<'approved' | 'rejected' | null>(null);
  const application = data?.enterpriseApplication;
  return (
    <div className="admin-page">
      <title>{t('staff:pageTitle', { page: application ? application.organisation : t('review.detail.title') })}</title>
      <p className="breadcrumb">
        <Link to="/admin/applications">{t('review.title')}</Link> <span aria-hidden="true">/</span>
      </p>
      {error && !data ? (
        <ErrorState title={t('review.detail.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('review.detail.loading')} />
      ) : !application ? (
        <EmptyState title={t('review.detail.notFound')}>
          <p>
            <Trans t={t} i18nKey="review.detail.notFoundHint" values={{ id }} components={{ code: <code />, queue: <Link to="/admin/applications" /> }} />
          </p>
        </EmptyState>
      ) : (
        <>
          <header className="account-header">
            <div className="account-header__title">
              <h1>{application.organisation}</h1>
              <div className="account-header__badges">
                <ApplicationStateBadge state={application.state} />
                <span className="badge">{t(`kind.${application.kind}.name`)}</span>
              </div>
            </div>
            <SubmittedLine application={application} />
          </header>
          <Decision application={application} onDecided={setDecided} />
          {decided && (
            <p className="notice" role="status">
              <span>{t(`review.detail.done.${decided}`, { organisation: application.organisation })}</span>
              <button type="button" className="notice__close" onClick={() => setDecided(null)} aria-label={t('staff:account.dismiss')}>
                ×
              </button>
            </p>
          )}
          <div className="review-columns">
            <div>
              <AdminSection title={t('review.detail.submitted')}>
                <ApplicationFacts application={application} />
              </AdminSection>
              <AdminSection title={t('review.detail.timeline')}>
                <ApplicationTimeline events={application.timeline} viewer="staff" />
              </AdminSection>
            </div>
            <Applicant application={application} />
          </div>
        </>
      )}
    </div>
  );
}

function SubmittedLine({ application }: { application: ApplicationDetail }) {
  const { t } = useTranslation('enterprise');
  const format = useFormat();
  const waited = (application.decidedAt ? Date.parse(application.decidedAt) : Date.now()) - Date.parse(application.submittedAt);
  return (
    <p className="muted review-submitted">
      {application.decidedAt
        ? t('review.detail.decidedLine', { submitted: format.dateTime(application.submittedAt), decided: format.dateTime(application.decidedAt), duration: format.duration(Math.max(0, waited)) })
        : t('review.detail.waitingLine', { submitted: format.dateTime(application.submittedAt), duration: format.duration(Math.max(0, waited)) })}
    </p>
  );
}

function Decision({ application, onDecided }: { application: ApplicationDetail; onDecided(decision: 'approved' | 'rejected'): void }) {
  const { t } = useTranslation(['enterprise', 'staff']);
  const viewer = useStaffViewer();
  const [dialog, setDialog] = useState<'approve' | 'reject' | null>(null);
  // The dashboard's queue length is cached per range: drop it, so the next visit counts again.
  const afterDecision = { refetchQueries: ['EnterpriseApplication'], update: (cache: ApolloCache) => void cache.evict({ fieldName: 'stats' }) };
  const [approve] = useMutation(APPROVE_ENTERPRISE_APPLICATION, afterDecision);
  const [reject] = useMutation(REJECT_ENTERPRISE_APPLICATION, afterDecision);
  if (application.state !== 'pending_review') {
    return <p className="account-actions account-actions--note muted">{t(`review.detail.closed.${application.state as Exclude<typeof application.state, 'pending_review'>}`)}</p>;
  }
  if (!viewer.viewerCanReviewApplications) {
    return <p className="account-actions account-actions--note muted">{t('review.detail.cannotReview')}</p>;
  }
  if (!application.viewerCanDecide) {
    return <p className="account-actions account-actions--note muted">{t('review.detail.ownApplication')}</p>;
  }
  return (
    <div className="account-actions">
      <button type="button" className="button" onClick={() => setDialog('approve')}>
        {t('review.detail.approve')}
      </button>
      <button type="button" className="button button--ghost-danger" onClick={() => setDialog('reject')}>
        {t('review.detail.reject')}
      </button>
      {dialog === 'approve' && (
        <ApproveDialog
          application={application}
          onClose={() => setDialog(null)}
          onConfirm={async (note, packageId) => {
            await approve({ variables: { id: application.id, note: note || null, packageId } });
            setDialog(null);
            onDecided('approved');
          }}
        />
      )}
      {dialog === 'reject' && (
        <ActionDialog
          title={t('review.detail.rejectDialog.title', { organisation: application.organisation })}
          confirmLabel={t('review.detail.reject')}
          danger
          reason="required"
          reasonLabel={t('review.detail.rejectDialog.reason')}
          reasonRequiredText={t('review.detail.rejectDialog.reasonRequired')}
          reasonPlaceholder={t('review.detail.rejectDialog.placeholder')}
          onClose={() => setDialog(null)}
          onConfirm={async (reason) => {
            await reject({ variables: { id: application.id, reason } });
            setDialog(null);
            onDecided('rejected');
          }}
        >
          <p>{t('review.detail.rejectDialog.body', { email: application.applicant?.email ?? application.contactEmail })}</p>
        </ActionDialog>
      )}
    </div>
  );
}

function ApproveDialog({ application, onClose, onConfirm }: { application: ApplicationDetail; onClose(): void; onConfirm(note: string, packageId: string | null): Promise<void> }) {
  const { t } = useTranslation(['enterprise', 'staff']);
  const text = usePlanText();
  const id = useId();
  const plans = useQuery(ASSIGNABLE_PLANS_QUERY);
  const [packageId, setPackageId] = useState('');
  const options = plans.data?.assignablePlans.flatMap((plan) => plan.packages.map((pkg) => ({ id: pkg.id, label: t('staff:actions.package.option', { name: text.packageLabel(plan, pkg), id: pkg.id }) }))) ?? [];
  return (
    <ActionDialog
      title={t('review.detail.approveDialog.title', { organisation: application.organisation })}
      confirmLabel={t('review.detail.approve')}
      reason="optional"
      reasonLabel={t('review.detail.approveDialog.note')}
      reasonPlaceholder={t('review.detail.approveDialog.placeholder')}
      onClose={onClose}
      onConfirm={(note) => onConfirm(note, packageId || null)}
      fields={
        <label className="field" htmlFor={`${id}-package`}>
          <span>
            {t('review.detail.approveDialog.package')} <span className="muted">{t('staff:optional')}</span>
          </span>
          <select id={`${id}-package`} value={packageId} onChange={(event) => setPackageId(event.target.value)}>
            <option value="">{t('review.detail.approveDialog.defaultPackage')}</option>
            {options.map((option) => (
              <option key={option.id} value={option.id}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <p>{t('review.detail.approveDialog.body', { email: application.applicant?.email ?? application.contactEmail })}</p>
    </ActionDialog>
  );
}

function Applicant({ application }: { application: ApplicationDetail }) {
  const { t } = useTranslation(['enterprise', 'usage']);
  const format = useFormat();
  const plan = usePlanText();
  const applicant = application.applicant;
  const others = application.otherApplications.filter((other) => other.id !== application.id);
  if (!applicant)
    return (
      <AdminSection title={t('review.detail.applicant.heading')}>
        <p className="muted">{t('review.detail.applicant.gone')}</p>
      </AdminSection>
    );
  const month = applicant.usage.pools.filter((pool) => pool.window === 'month');
  return (
    <AdminSection title={t('review.detail.applicant.heading')}>
      <div className="applicant-card">
        <p className="applicant-card__email">
          <Link to={`/admin/accounts/${applicant.id}`} className="account-link">
            {applicant.email}
          </Link>
        </p>
        <div className="account-header__badges">
          <PackageBadge packageId={applicant.planPackage} until={applicant.planPackageUntil} />
          <AccountStatus account={applicant} />
        </div>
        <dl className="facts">
          <div>
            <dt>{t('review.detail.applicant.age')}</dt>
            <dd>{format.duration(Math.max(0, Date.now() - Date.parse(applicant.createdAt)))}</dd>
          </div>
          <div>
            <dt>{t('review.detail.applicant.created')}</dt>
            <dd>{format.dateTime(applicant.createdAt)}</dd>
          </div>
          <div>
            <dt>{t('review.detail.applicant.email')}</dt>
            <dd>{applicant.emailVerified ? t('review.detail.applicant.verified') : t('review.detail.applicant.notVerified')}</dd>
          </div>
        </dl>
        <h3>{t('review.detail.applicant.usage')}</h3>
        <ul className="applicant-usage">
          {month.map((pool) => (
            <li key={pool.class}>
              <span>{plan.className(pool.class)}</span>
              <span className="inline-bar" aria-hidden="true">
                <span style={{ width: `${pool.limit.amountMicros > 0 ? Math.min(100, (pool.used.amountMicros / pool.limit.amountMicros) * 100) : 0}%` }} />
              </span>
              <span className="num">{t('review.detail.applicant.used', { used: format.money(pool.used), limit: format.money(pool.limit) })}</span>
            </li>
          ))}
        </ul>
        <h3>{t('review.detail.applicant.others')}</h3>
        {others.length === 0 ? (
          <p className="muted">{t('review.detail.applicant.noOthers')}</p>
        ) : (
          <ul className="applicant-others">
            {others.map((other) => (
              <li key={other.id}>
                <Link to={`/admin/applications/${other.id}`}>{other.organisation}</Link> <ApplicationStateBadge state={other.state} />
                <span className="cell-note">{t('review.detail.applicant.otherLine', { kind: t(`kind.${other.kind}.name`), time: format.dateTime(other.submittedAt) })}</span>
              </li>
            ))}
          </ul>
        )}
      </div>
    </AdminSection>
  );
}

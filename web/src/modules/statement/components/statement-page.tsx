/**
 * `/enterprise/console/statement?org=<id>&month=YYYY-MM`: an organisation's monthly statement for its owner
 * and admins — who it is for, the period, usage by model and by key, payments and refunds, credit opening
 * and closing, totals, a number and the date it was generated. Printing it (the Print button, or the
 * browser's "Save as PDF") gives the document alone: statement.css hides the site around it and breaks
 * pages between sections.
 */
import { useQuery } from '@apollo/client/react';
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { SignedIn, SignInPrompt } from '../../shell/components/signed-in.tsx';
import { ORGANISATION_STATEMENT_QUERY, type OrganisationStatement, type StatementPayment, type StatementUsage } from '../graphql/organisation-statement.query.ts';
import './statement.css';

/** This month in the reader's calendar: the default, and the latest month the picker offers. */
function thisMonth(): string {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}`;
}

export function StatementPage() {
  const { t } = useTranslation(['statement', 'shell']);
  const [params, setParams] = useSearchParams();
  const organisationId = params.get('org') ?? '';
  const month = params.get('month') ?? thisMonth();
  const monthId = useId();
  return (
    <div className="container page statement-page">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header statement-controls">
        <div>
          <p className="eyebrow">
            <Link to={`/enterprise/console?org=${encodeURIComponent(organisationId)}`}>{t('back')}</Link>
          </p>
          <h1>{t('title')}</h1>
        </div>
        <div className="statement-controls__actions">
          <label htmlFor={monthId} className="field">
            <span>{t('month')}</span>
            <input id={monthId} type="month" value={month} max={thisMonth()} onChange={(event) => event.target.value && setParams({ org: organisationId, month: event.target.value })} />
          </label>
          <button type="button" className="button" onClick={() => window.print()}>
            {t('print')}
          </button>
        </div>
      </header>
      <SignedIn loadError={t('loadError')} loadingLabel={t('loading')} signedOut={<SignInPrompt title={t('signedOut.title')} body={t('signedOut.body')} action={t('signedOut.action')} />}>
        {() => <Statement organisationId={organisationId} month={month} />}
      </SignedIn>
    </div>
  );
}

function Statement({ organisationId, month }: { organisationId: string; month: string }) {
  const { t } = useTranslation('statement');
  const { data, loading, error, refetch } = useQuery(ORGANISATION_STATEMENT_QUERY, { variables: { organisationId, month }, fetchPolicy: 'network-only', notifyOnNetworkStatusChange: true });
  if (error) return <ErrorState title={t('loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data || loading) return <LoadingState label={t('loading')} />;
  return <StatementDocument statement={data.organisationStatement} />;
}

function StatementDocument({ statement }: { statement: OrganisationStatement }) {
  const { t } = useTranslation('statement');
  const format = useFormat();
  const { organisation } = statement;
  const period = t('period', {
    from: format.day(`${statement.month}-01`, { year: true }),
    to: format.day(statement.lastDay, { year: true }),
    timezone: statement.timezone,
  });
  return (
    <article className="statement" aria-label={t('documentLabel', { number: statement.number })}>
      <header className="statement__head statement__section">
        <div>
          <p className="statement__brand">svc</p>
          <h2 className="statement__title">{t('documentTitle')}</h2>
          <p className="statement__period">{period}</p>
          {!statement.complete && <p className="notice notice--info statement__running">{t('running')}</p>}
        </div>
        <dl className="statement__meta">
          <dt>{t('number')}</dt>
          <dd data-testid="statement-number">{statement.number}</dd>
          <dt>{t('generated')}</dt>
          <dd>{format.dateTime(statement.generatedAt)}</dd>
          <dt>{t('currency')}</dt>
          <dd>{statement.currency}</dd>
        </dl>
      </header>

      <section className="statement__section statement__billed" aria-labelledby="statement-billed">
        <h3 id="statement-billed">{t('billedTo')}</h3>
        <dl className="statement__facts">
          <dt>{t('organisation')}</dt>
          <dd data-testid="statement-organisation">{organisation.name}</dd>
          <dt>{t('organisationId')}</dt>
          <dd>
            <code>{organisation.id}</code>
          </dd>
          {organisation.contactEmail && (
            <>
              <dt>{t('contact')}</dt>
              <dd>{organisation.contactEmail}</dd>
            </>
          )}
          {organisation.ownerEmail && (
            <>
              <dt>{t('owner')}</dt>
              <dd>{organisation.ownerEmail}</dd>
            </>
          )}
          {organisation.country && (
            <>
              <dt>{t('country')}</dt>
              <dd>{organisation.country}</dd>
            </>
          )}
          {organisation.website && (
            <>
              <dt>{t('website')}</dt>
              <dd>{organisation.website}</dd>
            </>
          )}
          <dt>{t('package')}</dt>
          <dd>{organisation.packageId}</dd>
        </dl>
      </section>

      <section className="statement__section" aria-labelledby="statement-summary">
        <h3 id="statement-summary">{t('summary.heading')}</h3>
        <dl className="statement__totals">
          <dt>{t('summary.usage')}</dt>
          <dd data-testid="statement-usage-total">{format.money(statement.usageTotal.cost)}</dd>
          {statement.paymentTotals.map((total) => (
            <div key={total.currency} className="statement__total-row">
              <dt>{t('summary.payments', { currency: total.currency })}</dt>
              <dd data-testid={`statement-paid-${total.currency}`}>{format.money(total.net)}</dd>
            </div>
          ))}
          {statement.credit && (
            <>
              <dt>{t('summary.creditOpening')}</dt>
              <dd data-testid="statement-credit-opening">{format.money(statement.credit.opening)}</dd>
              <dt>{t('summary.creditClosing')}</dt>
              <dd data-testid="statement-credit-closing">{format.money(statement.credit.closing)}</dd>
            </>
          )}
        </dl>
      </section>

      <section className="statement__section statement__break" aria-labelledby="statement-models">
        <h3 id="statement-models">{t('models.heading')}</h3>
        {statement.usageByModel.length === 0 ? (
          <p className="muted">{t('models.empty')}</p>
        ) : (
          <UsageTable
            label={t('models.model')}
            rows={statement.usageByModel.map((line) => ({ id: line.model, name: <code>{line.model}</code>, usage: line.usage }))}
            total={statement.usageTotal}
            testId="statement-models"
          />
        )}
      </section>

      <section className="statement__section statement__break" aria-labelledby="statement-keys">
        <h3 id="statement-keys">{t('keys.heading')}</h3>
        {statement.usageByKey.length === 0 ? (
          <p className="muted">{t('keys.empty')}</p>
        ) : (
          <UsageTable
            label={t('keys.key')}
            rows={statement.usageByKey.map((line) => ({
              id: line.keyId ?? line.credentialKind,
              name: line.name ? (
                <>
                  {line.name}{' '}
                  <code className="muted">
                    {line.prefix}…{line.last4}
                  </code>
                  {line.revoked && <span className="muted"> {t('keys.revoked')}</span>}
                </>
              ) : (
                t('keys.session')
              ),
              usage: line.usage,
            }))}
            total={statement.usageTotal}
            testId="statement-keys"
          />
        )}
      </section>

      <section className="statement__section statement__break" aria-labelledby="statement-payments">
        <h3 id="statement-payments">{t('payments.heading')}</h3>
        {statement.payments.length === 0 && statement.refunds.length === 0 ? (
          <p className="muted">{t('payments.empty')}</p>
        ) : (
          <div className="statement__table-wrap">
            <table className="statement__table" data-testid="statement-payments">
              <thead>
                <tr>
                  <th scope="col">{t('payments.date')}</th>
                  <th scope="col">{t('payments.order')}</th>
                  <th scope="col">{t('payments.what')}</th>
                  <th scope="col">{t('payments.provider')}</th>
                  <th scope="col" className="num">
                    {t('payments.amount')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {statement.payments.map((payment) => (
                  <PaymentRow key={`paid-${payment.orderId}`} payment={payment} refund={false} />
                ))}
                {statement.refunds.map((payment) => (
                  <PaymentRow key={`refund-${payment.orderId}`} payment={payment} refund />
                ))}
              </tbody>
              <tfoot>
                {statement.paymentTotals.map((total) => (
                  <tr key={total.currency}>
                    <th scope="row" colSpan={4}>
                      {t('payments.total', { currency: total.currency })}
                    </th>
                    <td className="num">{format.money(total.net)}</td>
                  </tr>
                ))}
              </tfoot>
            </table>
          </div>
        )}
      </section>

      {statement.credit && (
        <section className="statement__section statement__break" aria-labelledby="statement-credit">
          <h3 id="statement-credit">{t('credit.heading')}</h3>
          <div className="statement__table-wrap">
            <table className="statement__table" data-testid="statement-credit">
              <tbody>
                <tr>
                  <th scope="row">{t('credit.opening')}</th>
                  <td className="num">{format.money(statement.credit.opening)}</td>
                </tr>
                {statement.credit.movements.map((movement) => (
                  <tr key={movement.kind}>
                    <th scope="row">{t(`credit.kind.${movement.kind}`, { count: movement.entries })}</th>
                    <td className="num">{format.money(movement.amount)}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">{t('credit.closing')}</th>
                  <td className="num">{format.money(statement.credit.closing)}</td>
                </tr>
              </tfoot>
            </table>
          </div>
        </section>
      )}

      <footer className="statement__foot">
        <p className="muted">{t('footnote', { number: statement.number })}</p>
      </footer>
    </article>
  );
}

function UsageTable({ label, rows, total, testId }: { label: string; rows: { id: string; name: React.ReactNode; usage: StatementUsage }[]; total: StatementUsage; testId: string }) {
  const { t } = useTranslation('statement');
  const format = useFormat();
  return (
    <div className="statement__table-wrap">
      <table className="statement__table" data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">{label}</th>
            <th scope="col" className="num">
              {t('usage.requests')}
            </th>
            <th scope="col" className="num">
              {t('usage.input')}
            </th>
            <th scope="col" className="num">
              {t('usage.output')}
            </th>
            <th scope="col" className="num">
              {t('usage.cost')}
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id} data-line={row.id}>
              <th scope="row">{row.name}</th>
              <td className="num">{format.integer(row.usage.requests)}</td>
              <td className="num">{format.integer(row.usage.inputTokens)}</td>
              <td className="num">{format.integer(row.usage.outputTokens)}</td>
              <td className="num" data-cost-micros={row.usage.cost.amountMicros}>
                {format.money(row.usage.cost)}
              </td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">{t('usage.total')}</th>
            <td className="num">{format.integer(total.requests)}</td>
            <td className="num">{format.integer(total.inputTokens)}</td>
            <td className="num">{format.integer(total.outputTokens)}</td>
            <td className="num" data-cost-micros={total.cost.amountMicros}>
              {format.money(total.cost)}
            </td>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

function PaymentRow({ payment, refund }: { payment: StatementPayment; refund: boolean }) {
  const { t } = useTranslation(['statement', 'credit']);
  const format = useFormat();
  const at = refund ? payment.refundedAt : payment.paidAt;
  return (
    <tr data-order={payment.orderId} data-refund={refund || undefined}>
      <td>{at ? format.dateTime(at) : '—'}</td>
      <td>
        <code>{payment.orderId}</code>
      </td>
      <td>{refund ? t('payments.refund') : payment.kind === 'credit' ? t('payments.credit') : t('payments.package', { package: payment.packageId })}</td>
      <td>{t(`credit:provider.${payment.provider as 'alipay' | 'wechat' | 'stripe' | 'sandbox'}`)}</td>
      <td className="num">{refund ? format.money({ ...payment.amount, amount: `-${payment.amount.amount}` }) : format.money(payment.amount)}</td>
    </tr>
  );
}

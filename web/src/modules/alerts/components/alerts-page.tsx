/**
 * `/account/alerts` (`?org=<id>` for an organisation you administer): thresholds per meter (each usage
 * pool), email on or off, the signed webhook (URL, its secret shown once, rotate, send a test), and the
 * log of deliveries with each answer. Settings carry no `id`, so Apollo cannot merge a mutation's answer
 * into the query: each mutation refetches it.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { useErrorMessage } from '../../../lib/error-message.ts';
import { CopyButton } from '../../account/components/copy-button.tsx';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { SignedIn, SignInPrompt } from '../../shell/components/signed-in.tsx';
import { ALERT_DELIVERIES_QUERY } from '../graphql/alert-deliveries.query.ts';
import type { AlertSettingsFragment } from '../graphql/alert-settings.fragment.ts';
import { ALERT_SETTINGS_QUERY } from '../graphql/alert-settings.query.ts';
import { MARK_ALERT_NOTICES_READ } from '../graphql/mark-alert-notices-read.mutation.ts';
import { SEND_TEST_ALERT } from '../graphql/send-test-alert.mutation.ts';
import { SET_ALERT_EMAIL } from '../graphql/set-alert-email.mutation.ts';
import { SET_ALERT_THRESHOLDS } from '../graphql/set-alert-thresholds.mutation.ts';
import { SET_ALERT_WEBHOOK } from '../graphql/set-alert-webhook.mutation.ts';
import './alerts.css';

export function AlertsPage() {
  const { t } = useTranslation(['alerts', 'shell']);
  return (
    <div className="container page">
      <title>{t('shell:pageTitle', { page: t('title') })}</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/account">{t('breadcrumb')}</Link>
        </p>
        <h1>{t('title')}</h1>
        <p className="lede">{t('lede')}</p>
      </header>
      <SignedIn loadError={t('loadError')} loadingLabel={t('loading')} signedOut={<SignInPrompt title={t('signIn.title')} body={t('signIn.body')} action={t('signIn.action')} />}>
        {() => <Alerts />}
      </SignedIn>
    </div>
  );
}

function Alerts() {
  const { t } = useTranslation('alerts');
  const [params] = useSearchParams();
  const organisationId = params.get('org');
  const settings = useQuery(ALERT_SETTINGS_QUERY, { variables: { organisationId } });
  // Opening the page reads the notices: the header's badge clears (live, on every open tab).
  const [markRead] = useMutation(MARK_ALERT_NOTICES_READ);
  useEffect(() => {
    void markRead().catch(() => undefined);
  }, [markRead]);
  if (settings.error && !settings.data) return <ErrorState title={t('loadError')} error={settings.error} onRetry={() => void settings.refetch()} retrying={settings.loading} />;
  if (!settings.data) return <LoadingState label={t('loading')} />;
  const data = settings.data.alertSettings;
  return (
    <>
      <Thresholds settings={data} organisationId={organisationId} />
      <Channels settings={data} organisationId={organisationId} />
      <Deliveries organisationId={organisationId} />
    </>
  );
}

function Thresholds({ settings, organisationId }: { settings: AlertSettingsFragment; organisationId: string | null }) {
  const { t, i18n } = useTranslation('alerts');
  const id = useId();
  const errorMessage = useErrorMessage();
  const [save, state] = useMutation(SET_ALERT_THRESHOLDS, { refetchQueries: [ALERT_SETTINGS_QUERY] });
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const zh = i18n.language === 'zh-CN';
  const submit = (meter: string) => (event: FormEvent) => {
    event.preventDefault();
    const text = drafts[meter] ?? '';
    const thresholds = text.split(/[,，\s]+/).filter(Boolean).map(Number);
    void save({ variables: { organisationId, meter, thresholds } }).then(
      () =>
        setDrafts((d) => {
          const { [meter]: _saved, ...rest } = d;
          return rest;
        }),
      () => undefined,
    );
  };
  return (
    <section className="section" aria-labelledby={`${id}-thresholds`}>
      <div className="section__head">
        <h2 id={`${id}-thresholds`}>{t('thresholds.heading')}</h2>
        <p className="muted">{t('thresholds.note', { defaults: settings.defaultThresholds.join(', ') })}</p>
      </div>
      {state.error && <p className="form-error" role="alert">{errorMessage(state.error)}</p>}
      <div className="table-scroll">
        <table className="data-table alert-meters">
          <thead>
            <tr>
              <th scope="col">{t('thresholds.meter')}</th>
              <th scope="col">{t('thresholds.used')}</th>
              <th scope="col">{t('thresholds.thresholds')}</th>
            </tr>
          </thead>
          <tbody>
            {settings.meters.map(({ meter, thresholds, custom }) => {
              const percent = meter.limit.amountMicros > 0 ? Math.min(100, (meter.used.amountMicros / meter.limit.amountMicros) * 100) : 0;
              return (
                <tr key={meter.id} data-meter={meter.id}>
                  <th scope="row">{zh ? meter.labelZh : meter.label}</th>
                  <td>
                    <div className="alert-meter__bar" role="meter" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(percent)} aria-label={zh ? meter.labelZh : meter.label}>
                      <span style={{ width: `${percent}%` }} />
                      {thresholds.map((threshold) => (
                        <i key={threshold} style={{ left: `${threshold}%` }} title={`${threshold}%`} />
                      ))}
                    </div>
                    <span className="muted">
                      {meter.used.currency} {meter.used.amount} / {meter.limit.amount}
                    </span>
                  </td>
                  <td>
                    <form className="form form--inline" onSubmit={submit(meter.id)}>
                      <label className="visually-hidden" htmlFor={`${id}-${meter.id}`}>
                        {t('thresholds.inputLabel', { meter: zh ? meter.labelZh : meter.label })}
                      </label>
                      <input
                        id={`${id}-${meter.id}`}
                        className="alert-thresholds__input"
                        value={drafts[meter.id] ?? thresholds.join(', ')}
                        onChange={(event) => setDrafts((d) => ({ ...d, [meter.id]: event.target.value }))}
                        inputMode="numeric"
                      />
                      <button type="submit" className="button button--ghost" disabled={state.loading || drafts[meter.id] === undefined}>
                        {t('thresholds.save')}
                      </button>
                      {!custom && <span className="muted">{t('thresholds.default')}</span>}
                    </form>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Channels({ settings, organisationId }: { settings: AlertSettingsFragment; organisationId: string | null }) {
  const { t } = useTranslation('alerts');
  const id = useId();
  const errorMessage = useErrorMessage();
  const [setEmail, emailState] = useMutation(SET_ALERT_EMAIL, { refetchQueries: [ALERT_SETTINGS_QUERY] });
  const [setWebhook, webhookState] = useMutation(SET_ALERT_WEBHOOK, { refetchQueries: [ALERT_SETTINGS_QUERY], awaitRefetchQueries: true });
  const [sendTest, testState] = useMutation(SEND_TEST_ALERT, { refetchQueries: [ALERT_DELIVERIES_QUERY] });
  const [url, setUrl] = useState(settings.webhook?.url ?? '');
  const [secret, setSecret] = useState<string | null>(null);
  const saveWebhook = (rotateSecret: boolean) => (event?: FormEvent) => {
    event?.preventDefault();
    void setWebhook({ variables: { organisationId, url: url.trim() === '' ? null : url.trim(), rotateSecret } }).then((result) => setSecret(result.data?.setAlertWebhook.secret ?? null), () => undefined);
  };
  const test = testState.data?.sendTestAlert;
  return (
    <section className="section" aria-labelledby={`${id}-channels`}>
      <div className="section__head">
        <h2 id={`${id}-channels`}>{t('channels.heading')}</h2>
        <p className="muted">{organisationId ? t('channels.noteOrganisation') : t('channels.note')}</p>
      </div>
      <label className="alert-email">
        <input type="checkbox" checked={settings.emailEnabled} disabled={emailState.loading} onChange={(event) => void setEmail({ variables: { organisationId, enabled: event.target.checked } }).catch(() => undefined)} />
        {t('channels.email')}
      </label>
      <form className="form alert-webhook" onSubmit={saveWebhook(false)}>
        <div className="field">
          <label htmlFor={`${id}-url`}>{t('webhook.url')}</label>
          <input id={`${id}-url`} type="url" placeholder="https://example.com/svc-alerts" value={url} onChange={(event) => setUrl(event.target.value)} />
          <p className="muted">{t('webhook.urlHelp')}</p>
        </div>
        {webhookState.error && <p className="form-error" role="alert">{errorMessage(webhookState.error)}</p>}
        <div className="actions">
          <button type="submit" className="button" disabled={webhookState.loading}>
            {url.trim() === '' && settings.webhook ? t('webhook.remove') : t('webhook.save')}
          </button>
          {settings.webhook && (
            <>
              <button type="button" className="button button--ghost" onClick={() => saveWebhook(true)()} disabled={webhookState.loading}>
                {t('webhook.rotate')}
              </button>
              <button type="button" className="button button--ghost" onClick={() => void sendTest({ variables: { organisationId } }).catch(() => undefined)} disabled={testState.loading}>
                {testState.loading ? t('webhook.testing') : t('webhook.test')}
              </button>
            </>
          )}
        </div>
      </form>
      {settings.webhook && !secret && <p className="muted">{t('webhook.secretHint', { hint: settings.webhook.secretHint })}</p>}
      {secret && (
        <div className="new-key" role="status">
          <p className="new-key__title">{t('webhook.secretOnce')}</p>
          <div className="new-key__row">
            <code className="new-key__token" data-testid="webhook-secret">
              {secret}
            </code>
            <CopyButton value={secret} />
          </div>
        </div>
      )}
      {testState.error && <p className="form-error" role="alert">{errorMessage(testState.error)}</p>}
      {test && (
        <p className={test.state === 'delivered' ? 'alert-test alert-test--ok' : 'alert-test alert-test--failed'} role="status">
          {test.state === 'delivered' ? t('webhook.testOk', { status: test.lastStatus ?? '', ms: test.lastLatencyMs ?? 0 }) : t('webhook.testFailed', { error: test.lastError ?? test.state })}
        </p>
      )}
      <p className="muted">{t('webhook.verify')}</p>
    </section>
  );
}

function Deliveries({ organisationId }: { organisationId: string | null }) {
  const { t, i18n } = useTranslation('alerts');
  const id = useId();
  const deliveries = useQuery(ALERT_DELIVERIES_QUERY, { variables: { organisationId }, pollInterval: 5000 });
  const list = deliveries.data?.alertDeliveries;
  const time = (iso: string) => new Intl.DateTimeFormat(i18n.language, { dateStyle: 'short', timeStyle: 'medium' }).format(new Date(iso));
  return (
    <section className="section" aria-labelledby={`${id}-deliveries`}>
      <div className="section__head">
        <h2 id={`${id}-deliveries`}>{t('deliveries.heading')}</h2>
        <p className="muted">{t('deliveries.note')}</p>
      </div>
      {deliveries.error && !list ? (
        <ErrorState title={t('deliveries.loadError')} error={deliveries.error} onRetry={() => void deliveries.refetch()} retrying={deliveries.loading} />
      ) : !list ? (
        <LoadingState label={t('loading')} />
      ) : list.length === 0 ? (
        <p className="state state--empty">{t('deliveries.empty')}</p>
      ) : (
        <div className="table-scroll">
          <table className="data-table alert-deliveries">
            <thead>
              <tr>
                <th scope="col">{t('deliveries.when')}</th>
                <th scope="col">{t('deliveries.channel')}</th>
                <th scope="col">{t('deliveries.state')}</th>
                <th scope="col">{t('deliveries.answer')}</th>
              </tr>
            </thead>
            <tbody>
              {list.map((delivery) => (
                <tr key={delivery.id} data-state={delivery.state}>
                  <td>{time(delivery.createdAt)}</td>
                  <td>
                    {t(`deliveries.channels.${delivery.channel}`)}
                    {delivery.test && <span className="alert-tag">{t('deliveries.test')}</span>}
                    <div className="muted alert-target">{delivery.target}</div>
                  </td>
                  <td>
                    <span className={`alert-state alert-state--${delivery.state}`}>{t(`deliveries.states.${delivery.state}`)}</span>
                    <div className="muted">{t('deliveries.attempts', { count: delivery.attempts })}</div>
                    {delivery.nextAttemptAt && <div className="muted">{t('deliveries.next', { at: time(delivery.nextAttemptAt) })}</div>}
                  </td>
                  <td>
                    {delivery.lastStatus !== null && <code>HTTP {delivery.lastStatus}</code>} {delivery.lastLatencyMs !== null && <span className="muted">{delivery.lastLatencyMs} ms</span>}
                    {delivery.lastError && <div className="alert-error">{delivery.lastError}</div>}
                    {delivery.lastResponse && <div className="muted alert-response">{delivery.lastResponse}</div>}
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

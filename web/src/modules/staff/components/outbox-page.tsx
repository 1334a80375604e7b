/**
 * `/admin/outbox`: the development outbox. Without a mail server (and outside production) svc keeps the
 * mail it would have sent — sign-up and sign-in codes above all — and staff read it here, live: a mail
 * "sent" by any server appears at the top the moment it is (`devOutboxChanged`). A 6-digit code in a mail
 * is shown big, ready to read out or copy. With SMTP, or in production, the page says where mail goes instead.
 */
import { useApolloClient, useQuery, useSubscription } from '@apollo/client/react';
import { Trans, useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { CopyButton } from '../../account/components/copy-button.tsx';
import { LiveBadge, type LiveStatus } from '../../shell/components/live-badge.tsx';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { DEV_OUTBOX_CHANGED_SUBSCRIPTION } from '../graphql/dev-outbox-changed.subscription.ts';
import { DEV_OUTBOX_QUERY } from '../graphql/dev-outbox.query.ts';
import type { OutboxMailFragment } from '../graphql/outbox-mail.fragment.ts';

/** The sign-in or sign-up code a mail carries, if any. */
function codeIn(mail: OutboxMailFragment): string | null {
  return /\b(\d{6})\b/.exec(mail.text)?.[1] ?? null;
}

export function OutboxPage() {
  const { t } = useTranslation('staff');
  const client = useApolloClient();
  const { data, loading, error, refetch } = useQuery(DEV_OUTBOX_QUERY, { notifyOnNetworkStatusChange: true });
  const subscription = useSubscription(DEV_OUTBOX_CHANGED_SUBSCRIPTION, {
    onData: ({ data: pushed }) => {
      const fresh = pushed.data?.devOutboxChanged;
      if (fresh) client.writeQuery({ query: DEV_OUTBOX_QUERY, data: { devOutbox: fresh } });
    },
  });
  const outbox = data?.devOutbox;
  // The server answers at once when the subscription starts, so data means new mail will arrive here.
  const live: LiveStatus = subscription.error ? 'interrupted' : subscription.data ? 'live' : 'connecting';
  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: t('outbox.title') })}</title>
      <header className="admin-head">
        <div>
          <h1>{t('outbox.title')}</h1>
          <p className="muted admin-head__note">{t('outbox.note')}</p>
        </div>
        {outbox?.delivery === 'outbox' && <LiveBadge status={live} label={t(`outbox.live.${live}`)} />}
      </header>
      {error ? (
        <ErrorState title={t('outbox.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !outbox ? (
        <LoadingState label={t('outbox.loading')} />
      ) : outbox.delivery !== 'outbox' ? (
        <EmptyState title={t(`outbox.elsewhere.${outbox.delivery}`)}>
          <p>
            <Trans t={t} i18nKey={`outbox.elsewhereBody.${outbox.delivery}`} components={{ code: <code /> }} />
          </p>
        </EmptyState>
      ) : (
        <>
          <p className="muted outbox-where">
            <Trans t={t} i18nKey={outbox.logged ? 'outbox.whereLogged' : 'outbox.where'} components={{ code: <code /> }} />
          </p>
          {outbox.mails.length === 0 ? (
            <EmptyState title={t('outbox.empty')}>
              <p>{t('outbox.emptyBody')}</p>
            </EmptyState>
          ) : (
            <ol className="outbox" aria-label={t('outbox.listLabel')}>
              {outbox.mails.map((mail) => (
                <OutboxEntry key={mail.id} mail={mail} />
              ))}
            </ol>
          )}
        </>
      )}
    </div>
  );
}

function OutboxEntry({ mail }: { mail: OutboxMailFragment }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const code = codeIn(mail);
  return (
    <li className="outbox-mail" data-testid="outbox-mail">
      <div className="outbox-mail__head">
        <div className="outbox-mail__meta">
          <p className="outbox-mail__subject">{mail.subject}</p>
          <p className="muted outbox-mail__to">
            <Trans t={t} i18nKey="outbox.to" values={{ email: mail.to }} components={{ strong: <strong /> }} />
            {' · '}
            <time dateTime={mail.sentAt}>{format.dateTime(mail.sentAt)}</time>
          </p>
        </div>
        {code && (
          <div className="outbox-mail__code">
            <span className="outbox-mail__code-label">{t('outbox.code')}</span>
            <code data-testid="outbox-code">{code}</code>
            <CopyButton value={code} />
          </div>
        )}
      </div>
      {/* A long mail scrolls inside its box: focusable so the keyboard can scroll it. */}
      <pre className="outbox-mail__text" tabIndex={0}>
        {mail.text}
      </pre>
    </li>
  );
}

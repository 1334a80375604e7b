/**
 * The header's "Alerts" link with the count of unread notices, and a toast when a new one arrives — both
 * live from the `alertNoticesUpdated` subscription (its first answer is the state at subscribe time, so only
 * notices that arrive later pop up).
 */
import { useSubscription } from '@apollo/client/react';
import { useEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { useTranslation } from 'react-i18next';
import { Link, NavLink } from 'react-router';
import type { AlertNoticesFragment } from '../graphql/alert-notices.fragment.ts';
import { ALERT_NOTICES_UPDATED } from '../graphql/alert-notices-updated.subscription.ts';

type Notice = AlertNoticesFragment['notices'][number];

export function NoticeBell() {
  const { t } = useTranslation('alerts');
  const seen = useRef<Set<string> | null>(null);
  const [toast, setToast] = useState<Notice | null>(null);
  const { data } = useSubscription(ALERT_NOTICES_UPDATED, {
    onData: ({ data: event }) => {
      const notices = event.data?.alertNoticesUpdated.notices ?? [];
      const fresh = seen.current ? notices.find((notice) => !seen.current!.has(notice.id) && !notice.readAt) : undefined;
      seen.current = new Set(notices.map((notice) => notice.id));
      if (fresh) setToast(fresh);
    },
  });
  useEffect(() => {
    if (!toast) return;
    const timer = setTimeout(() => setToast(null), 10_000);
    return () => clearTimeout(timer);
  }, [toast]);
  const unread = data?.alertNoticesUpdated.unread ?? 0;
  return (
    <>
      <NavLink to="/account/alerts" className="site-nav__link notice-bell">
        {t('nav')}
        {unread > 0 && (
          <span className="notice-bell__count" aria-label={t('unread', { count: unread })}>
            {unread}
          </span>
        )}
      </NavLink>
      {/* In <body>: the sticky header is a containing block for fixed elements inside it. */}
      {toast &&
        createPortal(
        <div className="notice-toast" role="status" data-testid="alert-toast">
          <strong>{t('toast.title', { threshold: toast.threshold })}</strong>
          <div>{t('toast.body', { meter: t(`meters.${meterKey(toast.meter)}`, { defaultValue: toast.meter }), used: `${toast.used.currency} ${toast.used.amount}`, limit: toast.limit.amount })}</div>
          <Link to="/account/alerts" onClick={() => setToast(null)}>
            {t('toast.open')}
          </Link>
        </div>,
          document.body,
        )}
    </>
  );
}

/** The catalog key of a meter's name: `pool:fast:day` → `pool_fast_day`; a key's cap (`key:<id>:day`) → `key_day`. */
function meterKey(meter: string): string {
  return meter.startsWith('key:') ? `key_${meter.slice(meter.lastIndexOf(':') + 1)}` : meter.replaceAll(':', '_');
}

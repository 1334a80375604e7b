/** The state of a page's live subscription. */
export type LiveStatus = 'connecting' | 'live' | 'interrupted';

/** Whether a page's live updates are flowing: a coloured dot (`live--<status>`) and what it means, in words. */
export function LiveBadge({ status, label, title }: { status: string; label: string; title?: string }) {
  return (
    <span className={`live live--${status}`} role="status" title={title}>
      <span className="live__dot" aria-hidden="true" />
      {label}
    </span>
  );
}

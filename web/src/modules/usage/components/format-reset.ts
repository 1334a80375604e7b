/** "in 5 h 12 min" — coarse on purpose: the page re-renders every minute, so seconds would only flicker. */
export function formatResetsIn(resetsAt: string, now: number): string {
  const minutes = Math.max(0, Math.ceil((Date.parse(resetsAt) - now) / 60_000));
  if (minutes < 60) return minutes <= 1 ? 'in under a minute' : `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h ${minutes % 60} min`;
  return `in ${Math.floor(hours / 24)} days ${hours % 24} h`;
}

/** The reset instant in the service's time zone, which is what the windows follow: "Mon 24 Nov, 00:00 UTC". */
export function formatResetAt(resetsAt: string, timeZone: string): string {
  const date = new Date(resetsAt);
  try {
    const parts = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).formatToParts(date);
    const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((part) => part.type === type)?.value ?? '';
    return `${get('weekday')} ${get('day')} ${get('month')}, ${get('hour')}:${get('minute')} ${get('timeZoneName')}`;
  } catch {
    return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  }
}

/** Share of a pool used, as people read it: "0 %", "<0.1 %", "12.5 %", "100 %". */
export function formatShare(usedMicros: number, limitMicros: number): string {
  if (limitMicros <= 0) return usedMicros > 0 ? '100 %' : '0 %';
  const share = (usedMicros / limitMicros) * 100;
  if (usedMicros === 0) return '0\u00a0%';
  if (share < 0.1) return '<0.1\u00a0%';
  return `${share >= 10 ? Math.min(100, Math.round(share)) : share.toFixed(1)}\u00a0%`;
}

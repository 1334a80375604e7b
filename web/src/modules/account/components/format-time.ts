/** "21 Nov 2026, 22:05" in the reader's locale; relative words would go stale on an open page. */
export function formatTime(iso: string | null): string {
  if (!iso) return 'never';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

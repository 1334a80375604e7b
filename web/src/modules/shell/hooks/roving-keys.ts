import type { KeyboardEvent } from 'react';

/**
 * The keys of the WAI-ARIA tabs and radio group patterns, for a row of `role="tab"` or `role="radio"`
 * buttons: ArrowLeft/ArrowRight move to the previous/next option (wrapping), Home and End to the first
 * and last, and the option moved to is selected and focused. A radio group also takes ArrowUp/ArrowDown.
 * Put it on the tablist (or radiogroup); only the selected option has tabIndex 0 (one tab stop).
 */
export function rovingKeys<T>(options: readonly T[], current: T, select: (option: T) => void) {
  return (event: KeyboardEvent<HTMLElement>) => {
    const role = event.currentTarget.getAttribute('role') === 'radiogroup' ? 'radio' : 'tab';
    const last = options.length - 1;
    const index = Math.max(0, options.indexOf(current));
    const back = event.key === 'ArrowLeft' || (role === 'radio' && event.key === 'ArrowUp');
    const forward = event.key === 'ArrowRight' || (role === 'radio' && event.key === 'ArrowDown');
    const next = back ? (index === 0 ? last : index - 1) : forward ? (index === last ? 0 : index + 1) : event.key === 'Home' ? 0 : event.key === 'End' ? last : null;
    if (next === null || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    select(options[next]!);
    event.currentTarget.querySelectorAll<HTMLElement>(`[role="${role}"]`)[next]?.focus();
  };
}

/** The loading, empty and error states every data-backed section shows, so they look and read alike. */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useErrorMessage } from '../../../lib/error-message.ts';

export function LoadingState({ label }: { label: string }) {
  return (
    <div className="state state--loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function EmptyState({ title, compact = false, children }: { title: string; compact?: boolean; children?: ReactNode }) {
  return (
    <div className={compact ? 'state state--empty state--compact' : 'state state--empty'}>
      <p className="state__title">{title}</p>
      {children}
    </div>
  );
}

export function ErrorState({ title, error, onRetry, retrying }: { title: string; error: unknown; onRetry(): void; retrying: boolean }) {
  const { t } = useTranslation('shell');
  const errorMessage = useErrorMessage();
  return (
    <div className="state state--error" role="alert">
      <p className="state__title">{title}</p>
      <p className="state__message">{errorMessage(error)}</p>
      <button type="button" className="button" onClick={onRetry} disabled={retrying}>
        {retrying ? t('state.retrying') : t('state.retry')}
      </button>
    </div>
  );
}

/** A failed action under a form or a button (sign-in, revoke…), in the reader's language. */
export function ProblemLine({ error }: { error: unknown }) {
  const errorMessage = useErrorMessage();
  if (error === null || error === undefined) return null;
  return (
    <p className="form__error" role="alert">
      {errorMessage(error)}
    </p>
  );
}

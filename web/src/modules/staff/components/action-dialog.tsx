/**
 * Every staff action goes through this: a modal that says what will happen, asks why (kept in the audit
 * log with the actor's name), and shows what went wrong in the reader's language (the server's own
 * message). Nothing changes until the confirm button is pressed. Every text comes in translated.
 */
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useErrorMessage } from '../../../lib/error-message.ts';
import { useModal } from '../../shell/hooks/use-modal.ts';

export interface ActionDialogProps {
  title: string;
  /** What will happen, in a sentence or two. */
  children?: ReactNode;
  /** Extra fields (a package select, a date) shown above the reason. */
  fields?: ReactNode;
  confirmLabel: string;
  /** Destructive actions get a red button. */
  danger?: boolean;
  reason: 'required' | 'optional';
  reasonPlaceholder?: string;
  /** What the free-text field is called, when it is not a reason (e.g. a note to the applicant). */
  reasonLabel?: string;
  /** Said when a required reason is left empty, when the default sentence does not fit. */
  reasonRequiredText?: string;
  /** Does the action; a thrown error is shown in the dialog, which stays open. */
  onConfirm(reason: string): Promise<void>;
  onClose(): void;
}

export function ActionDialog({ title, children, fields, confirmLabel, danger, reason: reasonRule, reasonPlaceholder, reasonLabel, reasonRequiredText, onConfirm, onClose }: ActionDialogProps) {
  const { t } = useTranslation('staff');
  const errorMessage = useErrorMessage();
  const id = useId();
  const dialog = useModal();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  // The failed attempt's error (rendered in the current language), or 'reason' when the reason was left empty.
  const [problem, setProblem] = useState<unknown>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (reasonRule === 'required' && reason.trim() === '') {
      setProblem('reason');
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      await onConfirm(reason.trim());
    } catch (caught) {
      setProblem(caught);
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={dialog}
      className="action-dialog"
      aria-labelledby={`${id}-title`}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onClose();
      }}
    >
      <form onSubmit={(event) => void submit(event)} className="action-dialog__form" noValidate>
        <h2 id={`${id}-title`}>{title}</h2>
        {children && <div className="action-dialog__body">{children}</div>}
        {fields}
        <label className="field" htmlFor={`${id}-reason`}>
          <span>
            {reasonLabel ?? t('dialog.reason')} {reasonRule === 'optional' && <span className="muted">{t('optional')}</span>}
          </span>
          <textarea
            id={`${id}-reason`}
            value={reason}
            onChange={(event) => setReason(event.target.value)}
            rows={3}
            maxLength={500}
            placeholder={reasonPlaceholder ?? t('dialog.reasonPlaceholder')}
            required={reasonRule === 'required'}
            aria-describedby={problem !== null ? `${id}-problem` : undefined}
          />
        </label>
        {problem !== null && (
          <p id={`${id}-problem`} className="form__error action-dialog__problem" role="alert">
            {problem === 'reason' ? (reasonRequiredText ?? t('dialog.reasonRequired')) : errorMessage(problem)}
          </p>
        )}
        <div className="action-dialog__buttons">
          <button type="button" className="button button--ghost" onClick={onClose} disabled={busy}>
            {t('dialog.cancel')}
          </button>
          <button type="submit" className={danger ? 'button button--danger' : 'button'} disabled={busy}>
            {busy ? t('dialog.working') : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}

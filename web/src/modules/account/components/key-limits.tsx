/**
 * A key's own limits (issue 51) on the keys page: today's and this month's spend drawn against the key's
 * caps, a summary of its rpm, models and expiry, and the form that sets them (on create and on edit).
 */
import { useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import type { KeyLimitsFragment, KeyMoney } from '../graphql/api-key.fragment.ts';
import type { KeyLimitsInput } from '../graphql/create-api-key.mutation.ts';

/** Spend against a cap, drawn as a bar (no bar without a cap: only the amount). */
export function KeySpend({ spent, cap, label }: { spent: KeyMoney; cap: KeyMoney | null; label: string }) {
  const { t } = useTranslation('account');
  const format = useFormat();
  if (!cap) return <span className="key-spend">{t('keys.limits.spentNoCap', { spent: format.money(spent) })}</span>;
  const share = cap.amountMicros > 0 ? Math.min(1, spent.amountMicros / cap.amountMicros) : 1;
  const level = share >= 0.9 ? 'critical' : share >= 0.75 ? 'high' : 'normal';
  const text = t('keys.limits.spentOfCap', { spent: format.money(spent), cap: format.money(cap) });
  return (
    <span className={`key-spend key-spend--${level}`}>
      <span
        className="key-spend__track"
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={cap.amountMicros}
        aria-valuenow={Math.min(spent.amountMicros, cap.amountMicros)}
        aria-valuetext={text}
      >
        <span className="key-spend__fill" style={{ width: spent.amountMicros > 0 ? `max(3px, ${(share * 100).toFixed(2)}%)` : '0' }} />
      </span>
      <span className="key-spend__text">{text}</span>
    </span>
  );
}

/** The rpm, models and expiry of a key in one line. */
export function KeyLimitSummary({ limits }: { limits: KeyLimitsFragment }) {
  const { t } = useTranslation('account');
  const format = useFormat();
  const parts = [
    limits.requestsPerMinute === null ? t('keys.limits.rpmPlan') : t('keys.limits.rpm', { rpm: limits.requestsPerMinute }),
    limits.models === null ? t('keys.limits.allModels') : t('keys.limits.models', { models: limits.models.join(', ') }),
    limits.expiresAt === null ? t('keys.limits.noExpiry') : t('keys.limits.expires', { at: format.dateTime(limits.expiresAt) }),
  ];
  // One limit a line: a narrow column wraps between limits, not inside them.
  return (
    <span className="muted key-limit-summary">
      {parts.map((part) => (
        <span key={part}>{part}</span>
      ))}
    </span>
  );
}

interface Draft {
  budgetDay: string;
  budgetMonth: string;
  rpm: string;
  models: string;
  expires: string;
}

function draftOf(limits: KeyLimitsFragment | null): Draft {
  return {
    budgetDay: limits?.budgetDay?.amount ?? '',
    budgetMonth: limits?.budgetMonth?.amount ?? '',
    rpm: limits?.requestsPerMinute === null || !limits ? '' : String(limits.requestsPerMinute),
    models: limits?.models?.join(', ') ?? '',
    // The last day the key works (it stops at the next UTC midnight).
    expires: limits?.expiresAt ? new Date(Date.parse(limits.expiresAt) - 1).toISOString().slice(0, 10) : '',
  };
}

/** The form's fields as `KeyLimitsInput`: an empty field lifts that limit. */
export function limitsInput(draft: Draft): KeyLimitsInput {
  const text = (value: string) => (value.trim() === '' ? null : value.trim());
  const models = text(draft.models);
  return {
    budgetDay: text(draft.budgetDay),
    budgetMonth: text(draft.budgetMonth),
    requestsPerMinute: text(draft.rpm) === null ? null : Number(draft.rpm),
    models: models === null ? null : models.split(',').map((id) => id.trim()).filter((id) => id !== ''),
    expiresAt: text(draft.expires),
  };
}

/** The limit fields, for the create form (inside it) and the edit form (its own form). */
export function KeyLimitFields({ draft, onChange }: { draft: Draft; onChange(draft: Draft): void }) {
  const { t } = useTranslation('account');
  const id = useId();
  const field = (name: keyof Draft, label: string, props: Record<string, unknown> = {}) => (
    <label className="field" htmlFor={`${id}-${name}`}>
      <span>{label}</span>
      <input id={`${id}-${name}`} name={name} value={draft[name]} onChange={(e) => onChange({ ...draft, [name]: e.target.value })} {...props} />
    </label>
  );
  return (
    <div className="key-limit-fields">
      {field('budgetDay', t('keys.limits.budgetDay'), { inputMode: 'decimal', placeholder: t('keys.limits.noCap') })}
      {field('budgetMonth', t('keys.limits.budgetMonth'), { inputMode: 'decimal', placeholder: t('keys.limits.noCap') })}
      {field('rpm', t('keys.limits.rpmField'), { inputMode: 'numeric', placeholder: t('keys.limits.rpmPlan') })}
      {field('models', t('keys.limits.modelsField'), { placeholder: t('keys.limits.allModels') })}
      {field('expires', t('keys.limits.expiresField'), { type: 'date' })}
    </div>
  );
}

export function useLimitDraft(limits: KeyLimitsFragment | null) {
  return useState<Draft>(() => draftOf(limits));
}

/** Edits one key's limits; `onSave` gets the input (throws to show the problem). */
export function KeyLimitsEditor({ name, limits, onSave, onCancel }: { name: string; limits: KeyLimitsFragment; onSave(input: KeyLimitsInput): Promise<void>; onCancel(): void }) {
  const { t } = useTranslation('account');
  const [draft, setDraft] = useLimitDraft(limits);
  const [saving, setSaving] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaving(true);
    try {
      await onSave(limitsInput(draft));
    } finally {
      setSaving(false);
    }
  };
  return (
    <form className="form key-limits-editor" onSubmit={submit} aria-label={t('keys.limits.editLabel', { name })}>
      <h3>{t('keys.limits.editHeading', { name })}</h3>
      <p className="muted">{t('keys.limits.hint')}</p>
      <KeyLimitFields draft={draft} onChange={setDraft} />
      <div className="form__actions">
        <button type="submit" className="button" disabled={saving}>
          {saving ? t('keys.limits.saving') : t('keys.limits.save')}
        </button>
        <button type="button" className="button button--ghost" onClick={onCancel}>
          {t('keys.limits.cancel')}
        </button>
      </div>
    </form>
  );
}

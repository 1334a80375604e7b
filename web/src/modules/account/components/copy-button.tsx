import { useState } from 'react';
import { useTranslation } from 'react-i18next';

/** Copies a value to the clipboard and says whether it worked. */
export function CopyButton({ value, label }: { value: string; label?: string }) {
  const { t } = useTranslation('shell');
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    navigator.clipboard.writeText(value).then(
      () => setState('copied'),
      () => setState('failed'),
    );
  };
  return (
    <button type="button" className="button" onClick={copy} aria-live="polite">
      {state === 'copied' ? t('copy.copied') : state === 'failed' ? t('copy.failed') : (label ?? t('copy.copy'))}
    </button>
  );
}

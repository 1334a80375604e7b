import { useState } from 'react';
import { useTranslation } from 'react-i18next';

/** A copyable sample; `install` is the command that gets its library (code, so never translated). */
export function CodeBlock({ label, code, install }: { label: string; code: string; install?: string }) {
  const { t } = useTranslation('docs');
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    navigator.clipboard.writeText(code).then(
      () => setCopied('copied'),
      () => setCopied('failed'),
    );
  };
  return (
    <figure className="code-block">
      <figcaption className="code-block__head">
        <span>
          {label}
          {install && (
            <>
              {' · '}
              <code>{install}</code>
            </>
          )}
        </span>
        <button type="button" className="code-block__copy" onClick={copy}>
          {copied === 'copied' ? t('copy.copied') : copied === 'failed' ? t('copy.failed') : t('copy.copy')}
        </button>
      </figcaption>
      {/* Long lines scroll inside the block; focusable so the keyboard can scroll it too. */}
      <pre tabIndex={0}>
        <code>{code}</code>
      </pre>
    </figure>
  );
}

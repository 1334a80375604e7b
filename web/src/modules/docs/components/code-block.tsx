import { useState } from 'react';

export function CodeBlock({ label, code }: { label: string; code: string }) {
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
        <span>{label}</span>
        <button type="button" className="code-block__copy" onClick={copy}>
          {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy failed' : 'Copy'}
        </button>
      </figcaption>
      <pre>
        <code>{code}</code>
      </pre>
    </figure>
  );
}

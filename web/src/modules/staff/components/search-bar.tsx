/** The staff pages' search box (accounts, orders): a draft that follows the searched value, submitted trimmed. */
import { useEffect, useId, useState, type FormEvent } from 'react';

export function SearchBar({
  value,
  onSearch,
  label,
  placeholder,
  submitLabel,
  maxLength,
  clearLabel,
}: {
  value: string;
  onSearch(query: string): void;
  label: string;
  placeholder: string;
  submitLabel: string;
  maxLength: number;
  /** With a label, a "clear" button shows while there is a search. */
  clearLabel?: string;
}) {
  const id = useId();
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch(draft.trim());
  };
  return (
    <form className="search-bar" role="search" onSubmit={submit}>
      <label htmlFor={`${id}-q`} className="visually-hidden">
        {label}
      </label>
      <input
        id={`${id}-q`}
        type="search"
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
        placeholder={placeholder}
        autoComplete="off"
        spellCheck={false}
        maxLength={maxLength}
      />
      <button type="submit" className="button">
        {submitLabel}
      </button>
      {clearLabel && value && (
        <button type="button" className="button button--ghost" onClick={() => onSearch('')}>
          {clearLabel}
        </button>
      )}
    </form>
  );
}

/** "Load more" under a paged staff list, reading "loading…" while the next page comes. */
export function MoreButton({ onMore, loadingMore, label, loadingLabel }: { onMore(): void; loadingMore: boolean; label: string; loadingLabel: string }) {
  return (
    <div className="actions">
      <button type="button" className="button button--ghost" onClick={onMore} disabled={loadingMore}>
        {loadingMore ? loadingLabel : label}
      </button>
    </div>
  );
}

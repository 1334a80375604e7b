/**
 * What personal keys (`/account`) and organisation keys (the enterprise console) show alike: the token
 * shown once after minting, and the table of keys by prefix and last four with a revoke button a row.
 *
 * A key has many columns (spend today and this month, limits, dates, actions) and `/account` is a narrow
 * page: where the table's frame is narrower than its columns need, each key becomes a card — its name on
 * top, each value under its column's name, the buttons below (a container query in account.css), so
 * nothing is cut off at the card's edge and nothing scrolls sideways. The rows keep their table roles.
 */
import type { ReactNode } from 'react';
import { CopyButton } from './copy-button.tsx';

/** The freshly minted token, shown once with a copy button, until the reader says they have copied it. */
export function NewKeyNotice({ title, token, testId, dismissLabel, onDismiss }: { title: ReactNode; token: string; testId: string; dismissLabel: string; onDismiss(): void }) {
  return (
    <div className="new-key" role="status">
      <p className="new-key__title">{title}</p>
      <div className="new-key__row">
        <code className="new-key__token" data-testid={testId}>
          {token}
        </code>
        <CopyButton value={token} />
      </div>
      <button type="button" className="button button--ghost" onClick={onDismiss}>
        {dismissLabel}
      </button>
    </div>
  );
}

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: string;
}

export interface KeyTableText {
  name: string;
  key: string;
  created: string;
  lastUsed: string;
  actions: string;
  revoke: string;
  revoking: string;
}

/**
 * The keys, a row each: name, `prefix…last4`, any `extra` columns, when made and last used, and (with
 * `onRevoke`) a revoke button that reads "revoking" while `revoking` is that key's id.
 */
export function KeyTable<K extends KeyRow>({
  keys,
  text,
  className = 'data-table',
  dateClassName,
  extra = [],
  created,
  lastUsed,
  rowActions,
  onRevoke,
  revoking,
}: {
  keys: readonly K[];
  text: KeyTableText;
  className?: string;
  dateClassName?: string;
  extra?: { header: string; cell(key: K): ReactNode }[];
  created(key: K): ReactNode;
  lastUsed(key: K): ReactNode;
  /** Buttons of a row besides revoke (e.g. "Set limits"), shown before it. */
  rowActions?: (key: K) => ReactNode;
  onRevoke?: (key: K) => void;
  revoking: string | null;
}) {
  const actions = onRevoke !== undefined || rowActions !== undefined;
  return (
    <div className="table-scroll key-table-frame">
      <table className={`${className} key-table`}>
        <thead>
          <tr>
            <th scope="col">{text.name}</th>
            <th scope="col">{text.key}</th>
            {extra.map((column) => (
              <th key={column.header} scope="col">
                {column.header}
              </th>
            ))}
            <th scope="col">{text.created}</th>
            <th scope="col">{text.lastUsed}</th>
            {actions && (
              <th scope="col">
                <span className="visually-hidden">{text.actions}</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} data-key={key.id}>
              <th scope="row" className="key-table__name">
                {key.name}
              </th>
              <td className="key-table__key" data-label={text.key}>
                <code>
                  {key.prefix}…{key.last4}
                </code>
              </td>
              {extra.map((column) => (
                <td key={column.header} data-label={column.header}>
                  {column.cell(key)}
                </td>
              ))}
              <td className={dateClassName} data-label={text.created}>
                {created(key)}
              </td>
              <td className={dateClassName} data-label={text.lastUsed}>
                {lastUsed(key)}
              </td>
              {actions && (
                <td className="data-table__actions key-table__actions">
                  {rowActions?.(key)}
                  {onRevoke && (
                    <button type="button" className="button button--ghost" disabled={revoking === key.id} onClick={() => onRevoke(key)}>
                      {revoking === key.id ? text.revoking : text.revoke}
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

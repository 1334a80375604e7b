import type { ReactNode } from 'react';

/** One titled block of a staff detail page (account, application, organisation), with an optional note under the title. */
export function AdminSection({ title, note, children }: { title: string; note?: ReactNode; children: ReactNode }) {
  return (
    <section className="admin-section" aria-label={title}>
      <div className="admin-section__head">
        <h2>{title}</h2>
        {note && <p className="muted">{note}</p>}
      </div>
      {children}
    </section>
  );
}

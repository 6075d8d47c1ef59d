import type { ComponentChildren } from 'preact';
import { ErrorBox } from './ErrorBox';

/** A page before its first data: its heading (and `children`), then why it failed or that it is loading. */
export function Loading({ id, title, error, children }: { id: string; title: string; error: unknown; children?: ComponentChildren }) {
  return (
    <section aria-labelledby={id}>
      <h1 id={id}>{title}</h1>
      {children}
      {error ? <ErrorBox error={error} /> : <p aria-busy="true">Loading…</p>}
    </section>
  );
}

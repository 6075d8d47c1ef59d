import { formatTime } from '../lib/quantity';

/** A table's header row: one column header per name. */
export function THead({ cols }: { cols: string[] }) {
  return (
    <thead>
      <tr>{cols.map((c) => <th key={c} scope="col">{c}</th>)}</tr>
    </thead>
  );
}

/**
 * The status cell of a token or certificate: when it was revoked; else a
 * Revoke button for whoever may revoke it (`onRevoke`), "valid" for others.
 */
export function RevokeCell({ revoked, label, onRevoke }: { revoked: string | undefined; label: string; onRevoke?: (() => void) | undefined }) {
  return (
    <td>
      {revoked ? `revoked ${formatTime(revoked)}` : onRevoke ? (
        <button type="button" class="btn" onClick={onRevoke} aria-label={label}>Revoke</button>
      ) : 'valid'}
    </td>
  );
}

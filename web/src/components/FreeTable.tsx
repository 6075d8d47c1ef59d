import type { FreeCapacity } from '../api/types';
import { freeRows } from '../lib/free';
import type { CapacityKind } from '../lib/quota';

/** What the server says is free of one kind of GPU sharing, one row per model (and profile). */
export function FreeTable({ kind, free, labelledBy }: { kind: CapacityKind; free: FreeCapacity; labelledBy: string }) {
  return (
    <table aria-labelledby={labelledBy} data-free-capacity={free.gpu_sharing}>
      <tbody>
        {freeRows(kind, free).map((r) => (
          <tr key={r.key} data-free={r.key}>
            <th scope="row">{r.label}</th>
            <td>{r.value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

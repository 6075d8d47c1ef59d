// Quota arithmetic for the Overview and Usage pages, and the tier's capacity kind.
import type { GpuSharing, TenantQuota, TenantQuotaStatus, VClusterState, VirtualCluster } from '../api/types';
import { formatCpuMilli, formatGpuMilli, formatMiB, toInt, type IntLike } from './quantity';

export interface QuotaRow {
  key: keyof TenantQuota;
  label: string;
  used: number;
  /** null: unlimited */
  limit: number | null;
  format: (v: IntLike) => string;
}

const QUOTA_KINDS: { key: keyof TenantQuota; label: string; format: (v: IntLike) => string }[] = [
  { key: 'gpu_milli', label: 'GPU-equivalents', format: formatGpuMilli },
  { key: 'vclusters', label: 'Virtual clusters', format: (v) => String(toInt(v)) },
  { key: 'cpu_milli', label: 'CPU', format: formatCpuMilli },
  { key: 'memory_mib', label: 'Memory', format: formatMiB },
  { key: 'pods', label: 'Pods', format: (v) => String(toInt(v)) },
];

/** One row per quota kind: used, limit (null when unlimited). */
export function quotaRows(status: TenantQuotaStatus): QuotaRow[] {
  return QUOTA_KINDS.map(({ key, label, format }) => {
    const limit = status.limits?.[key];
    return {
      key,
      label,
      used: toInt(status.usage?.[key]),
      limit: limit === undefined || limit === null ? null : toInt(limit),
      format,
    };
  });
}

/** What is left under a limit; null when unlimited, never below 0. */
export function remaining(row: Pick<QuotaRow, 'used' | 'limit'>): number | null {
  return row.limit === null ? null : Math.max(0, row.limit - row.used);
}

export interface Holdings {
  /** shared tier: fraction budget over all shares */
  sharedMilli: number;
  sharedMemoryMib: number;
  shares: number;
  /** isolated tier: MIG instances per profile */
  migByProfile: Record<string, number>;
  /** dedicated tier */
  wholeGpus: number;
  /** exclusive tier */
  nodes: number;
}

/** What a tenant's virtual clusters hold, summed from their reservations. */
export function holdings(vclusters: VirtualCluster[]): Holdings {
  const h: Holdings = { sharedMilli: 0, sharedMemoryMib: 0, shares: 0, migByProfile: {}, wholeGpus: 0, nodes: 0 };
  for (const vc of vclusters) {
    const r = vc.reservation;
    if (!r) continue;
    for (const s of r.shares ?? []) {
      h.shares += 1;
      h.sharedMilli += toInt(s.milli_gpu);
      h.sharedMemoryMib += toInt(s.gpu_memory_mib);
    }
    for (const m of r.mig ?? []) {
      const p = m.profile ?? '?';
      h.migByProfile[p] = (h.migByProfile[p] ?? 0) + 1;
    }
    h.wholeGpus += (r.gpus ?? []).length;
    h.nodes += (r.nodes ?? []).length;
  }
  return h;
}

export const STATES: VClusterState[] = ['PROVISIONING', 'READY', 'SLEEPING', 'DELETING', 'FAILED'];

/**
 * Virtual clusters per state without listing them all: `total` is the quota's
 * usage count (septad counts every virtual cluster, whatever its state), and
 * `others` the count of each state but READY (read with `filter=state=…`;
 * usually few). READY, usually most, is the rest. The reads happen at
 * slightly different moments, so a change between them can show for one
 * refresh; never below 0.
 */
export function countsByState(total: number, others: Partial<Record<VClusterState, number>>): Record<VClusterState, number> {
  const out = Object.fromEntries(STATES.map((s) => [s, others[s] ?? 0])) as Record<VClusterState, number>;
  out.READY = Math.max(0, total - STATES.reduce((sum, s) => sum + (s === 'READY' ? 0 : out[s]), 0));
  return out;
}

/** The states counted with `filter=state=…`; READY is derived (countsByState). */
export const COUNTED_STATES = STATES.filter((s) => s !== 'READY');

/** The capacity field of the VirtualCluster a tier's tenants may set. */
export type CapacityKind = 'shared' | 'mig' | 'gpus' | 'nodes';

export function capacityKindOf(sharing: GpuSharing | undefined): CapacityKind | null {
  switch (sharing) {
    case 'FRACTIONAL':
      return 'shared';
    case 'MIG':
      return 'mig';
    case 'WHOLE_GPU':
      return 'gpus';
    case 'WHOLE_NODE':
      return 'nodes';
    default:
      return null;
  }
}

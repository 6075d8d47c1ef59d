// The create/resize form's capacity inputs: which ones a tier offers, and the
// request body they make. Values are the inputs' strings.
import type { Capacity, VirtualCluster } from '../api/types';
import type { CapacityKind } from './quota';

/** Profiles of the MIG catalog the form offers (H100/A100 80 GB). */
export const MIG_PROFILES = ['1g.10gb', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'];

export interface CapacityInput {
  /** request field name, as a violation names it */
  field: string;
  label: string;
  kind: 'count' | 'text' | 'profile';
  hint?: string;
  required: boolean;
}

export const CAPACITY_INPUTS: Record<CapacityKind, CapacityInput[]> = {
  shared: [
    { field: 'capacity.shared.milli_gpu', label: 'GPU share (thousandths of a GPU)', kind: 'count', hint: '1000 = one whole GPU’s time', required: true },
    { field: 'capacity.shared.gpu_memory_mib', label: 'GPU memory (MiB)', kind: 'count', required: true },
  ],
  mig: [
    { field: 'capacity.mig[0].profile', label: 'MIG profile', kind: 'profile', required: true },
    { field: 'capacity.mig[0].count', label: 'MIG instances', kind: 'count', required: true },
    { field: 'capacity.mig[0].model', label: 'GPU model', kind: 'text', hint: 'empty: any model with the profile', required: false },
  ],
  gpus: [
    { field: 'capacity.gpus.count', label: 'Whole GPUs', kind: 'count', required: true },
    { field: 'capacity.gpus.model', label: 'GPU model', kind: 'text', hint: 'empty: any model', required: false },
  ],
  nodes: [
    { field: 'capacity.nodes.count', label: 'Whole nodes', kind: 'count', required: true },
    { field: 'capacity.nodes.model', label: 'GPU model of the nodes', kind: 'text', hint: 'empty: any', required: false },
  ],
};

/** The form's request fields besides capacity. */
export const WORKLOAD_FIELDS = ['quota.cpu_milli', 'quota.memory_mib', 'quota.pods'] as const;

export type FormValues = Record<string, string>;

function int(v: string | undefined): number {
  return v === undefined || v.trim() === '' ? 0 : Number(v.trim());
}

/**
 * The Capacity body for the tier's kind. Numbers are sent as typed (even
 * malformed or negative) so that the server's violation, not a second set of
 * rules here, says what is wrong.
 */
export function capacityBody(kind: CapacityKind, v: FormValues): Capacity {
  const text = (f: string) => (v[f] ?? '').trim();
  switch (kind) {
    case 'shared':
      return { shared: { milli_gpu: int(v['capacity.shared.milli_gpu']), gpu_memory_mib: int(v['capacity.shared.gpu_memory_mib']) } };
    case 'mig':
      return { mig: [{ profile: text('capacity.mig[0].profile'), count: int(v['capacity.mig[0].count']), model: text('capacity.mig[0].model') }] };
    case 'gpus':
      return { gpus: { count: int(v['capacity.gpus.count']), model: text('capacity.gpus.model') } };
    case 'nodes':
      return { nodes: { count: int(v['capacity.nodes.count']), model: text('capacity.nodes.model') } };
  }
}

/** Form values showing a virtual cluster's current capacity and workload quota (for resize). */
export function formValuesOf(vc: VirtualCluster): FormValues {
  const c = vc.capacity ?? {};
  const s = (n: number | undefined) => (n === undefined ? '' : String(n));
  const m = c.mig?.[0];
  return {
    display_name: vc.display_name ?? '',
    'capacity.shared.milli_gpu': s(c.shared?.milli_gpu),
    'capacity.shared.gpu_memory_mib': s(c.shared?.gpu_memory_mib),
    'capacity.mig[0].profile': m?.profile ?? '',
    'capacity.mig[0].count': s(m?.count),
    'capacity.mig[0].model': m?.model ?? '',
    'capacity.gpus.count': s(c.gpus?.count),
    'capacity.gpus.model': c.gpus?.model ?? '',
    'capacity.nodes.count': s(c.nodes?.count),
    'capacity.nodes.model': c.nodes?.model ?? '',
    'quota.cpu_milli': s(vc.quota?.cpu_milli || undefined),
    'quota.memory_mib': s(vc.quota?.memory_mib || undefined),
    'quota.pods': s(vc.quota?.pods || undefined),
  };
}

/** "0.5 GPU share, 8000 MiB" — one line for lists. */
export function describeCapacity(c: Capacity | undefined): string {
  if (!c) return '';
  if (c.shared) return `${(c.shared.milli_gpu ?? 0) / 1000} GPU share, ${c.shared.gpu_memory_mib ?? 0} MiB`;
  if (c.mig && c.mig.length > 0) return c.mig.map((m) => `${m.count ?? 0}× ${m.profile ?? '?'}${m.model ? ` (${m.model})` : ''}`).join(', ');
  if (c.gpus) return `${c.gpus.count ?? 0} GPU${c.gpus.count === 1 ? '' : 's'}${c.gpus.model ? ` ${c.gpus.model}` : ''}`;
  if (c.nodes) return `${c.nodes.count ?? 0} node${c.nodes.count === 1 ? '' : 's'}${c.nodes.model ? ` ${c.nodes.model}` : ''}`;
  return '';
}

/** Server fields that are not inputs, placed beside the input that asked for the quantity. */
export function quotaAliases(kind: CapacityKind): Record<string, string> {
  const first = CAPACITY_INPUTS[kind].find((i) => i.kind === 'count')?.field ?? '';
  return {
    'tenant.quota.gpu_milli': first,
    'tenant.quota.vclusters': 'name',
    'tenant.quota.cpu_milli': 'quota.cpu_milli',
    'tenant.quota.memory_mib': 'quota.memory_mib',
    'tenant.quota.pods': 'quota.pods',
  };
}

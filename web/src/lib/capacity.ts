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

/** The inputs of the kinds with one set of inputs; MIG has one set per row (migRowInputs). */
const FIXED_INPUTS: Record<Exclude<CapacityKind, 'mig'>, CapacityInput[]> = {
  shared: [
    { field: 'capacity.shared.milli_gpu', label: 'GPU share (thousandths of a GPU)', kind: 'count', hint: '1000 = one whole GPU’s time', required: true },
    { field: 'capacity.shared.gpu_memory_mib', label: 'GPU memory (MiB)', kind: 'count', required: true },
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

/** "capacity.mig[1].count": the request field, as the server's violations name it. */
export function migField(row: number, part: 'profile' | 'count' | 'model'): string {
  return `capacity.mig[${row}].${part}`;
}

/** One MIG row's inputs; labels carry the row number so that each is unique on the page. */
export function migRowInputs(row: number): CapacityInput[] {
  const n = row + 1;
  return [
    { field: migField(row, 'profile'), label: `MIG profile, row ${n}`, kind: 'profile', required: true },
    { field: migField(row, 'count'), label: `MIG instances, row ${n}`, kind: 'count', required: true },
    { field: migField(row, 'model'), label: `GPU model, row ${n}`, kind: 'text', hint: 'empty: any model with the profile', required: false },
  ];
}

/** Rows of the MIG request in the form: rows are numbered from 0 without gaps, and there is always one. */
export function migRowCount(v: FormValues): number {
  let n = 1;
  while (migField(n, 'profile') in v) n++;
  return n;
}

/** The form's values with an empty MIG row appended. */
export function addMigRow(v: FormValues, profile: string): FormValues {
  const n = migRowCount(v);
  return { ...v, [migField(n, 'profile')]: profile, [migField(n, 'count')]: '', [migField(n, 'model')]: '' };
}

/** The form's values without MIG row `row`: later rows move up so that indices match the request's. */
export function removeMigRow(v: FormValues, row: number): FormValues {
  const n = migRowCount(v);
  if (n <= 1 || row < 0 || row >= n) return v;
  const out = { ...v };
  for (let i = row; i < n - 1; i++) {
    for (const part of ['profile', 'count', 'model'] as const) out[migField(i, part)] = v[migField(i + 1, part)] ?? '';
  }
  for (const part of ['profile', 'count', 'model'] as const) delete out[migField(n - 1, part)];
  return out;
}

/** The capacity inputs the tier's kind offers, every MIG row's included. */
export function capacityInputs(kind: CapacityKind, v: FormValues): CapacityInput[] {
  if (kind !== 'mig') return FIXED_INPUTS[kind];
  return Array.from({ length: migRowCount(v) }, (_, i) => migRowInputs(i)).flat();
}

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
      return { mig: Array.from({ length: migRowCount(v) }, (_, i) => ({ profile: text(migField(i, 'profile')), count: int(v[migField(i, 'count')]), model: text(migField(i, 'model')) })) };
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
  const mig = c.mig?.length ? c.mig : [{}];
  return {
    display_name: vc.display_name ?? '',
    'capacity.shared.milli_gpu': s(c.shared?.milli_gpu),
    'capacity.shared.gpu_memory_mib': s(c.shared?.gpu_memory_mib),
    ...Object.fromEntries(
      mig.flatMap((m, i) => [
        [migField(i, 'profile'), m.profile ?? ''],
        [migField(i, 'count'), s(m.count)],
        [migField(i, 'model'), m.model ?? ''],
      ]),
    ),
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
  const first = capacityInputs(kind, {}).find((i) => i.kind === 'count')?.field ?? '';
  return {
    'tenant.quota.gpu_milli': first,
    'tenant.quota.vclusters': 'name',
    'tenant.quota.cpu_milli': 'quota.cpu_milli',
    'tenant.quota.memory_mib': 'quota.memory_mib',
    'tenant.quota.pods': 'quota.pods',
  };
}

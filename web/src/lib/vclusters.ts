// Presentation rules for virtual clusters shared by the list and detail pages.
import type { Reservation, VirtualCluster } from '../api/types';
import { holdings } from './quota';
import { formatCpuMilli, formatMiB } from './quantity';

const TRANSITIONAL = new Set(['PROVISIONING', 'DELETING']);

/** Poll fast while something is changing on its own, slowly otherwise. */
export function pollIntervalMs(vcs: VirtualCluster[] | undefined): number {
  return vcs?.some((v) => TRANSITIONAL.has(v.state ?? '')) ? 2000 : 10000;
}

/** "5/5 true" or the first condition that is not True, with its reason. */
export function conditionSummary(vc: VirtualCluster): string {
  const cs = vc.conditions ?? [];
  const bad = cs.find((c) => c.status !== 'True');
  if (!bad) return `${cs.length}/${cs.length} true`;
  return `${bad.type} ${bad.status}${bad.reason ? `: ${bad.reason}` : ''}`;
}

/** Client-side filter: name or display name contains `text`; state equals `state` unless empty. */
export function filterVClusters(vcs: VirtualCluster[], text: string, state: string): VirtualCluster[] {
  const needle = text.trim().toLowerCase();
  return vcs.filter(
    (v) =>
      (!state || v.state === state) &&
      (!needle || (v.name ?? '').toLowerCase().includes(needle) || (v.display_name ?? '').toLowerCase().includes(needle)),
  );
}

/** Where a reservation sits, in one line: "500 milli on t4-0 GPU 0; 3g.40gb on h100-0 GPU 2". */
export function describeReservation(r: Reservation | undefined): string {
  if (!r) return 'nothing';
  const parts = [
    ...(r.shares ?? []).map((s) => `${s.milli_gpu ?? 0} milli-GPU on ${s.node} GPU ${s.gpu}`),
    ...(r.mig ?? []).map((m) => `${m.profile} on ${m.node} GPU ${m.gpu}`),
    ...(r.gpus ?? []).map((g) => `${g.node} GPU ${g.gpu}`),
    ...(r.nodes ?? []).map((n) => `node ${n}`),
  ];
  return parts.length ? parts.join('; ') : 'nothing';
}

/** What a reservation holds, in amounts rather than places: "2× 3g.40gb, 1× 1g.10gb"; "nothing" when empty. */
export function describeHeld(r: Reservation | undefined): string {
  const h = holdings([{ reservation: r }]);
  const parts = [
    h.shares ? `${h.sharedMilli} milli-GPU and ${formatMiB(h.sharedMemoryMib)} on ${h.shares} GPU${h.shares === 1 ? '' : 's'}` : '',
    Object.entries(h.migByProfile).sort().map(([p, n]) => `${n}× ${p}`).join(', '),
    h.wholeGpus ? `${h.wholeGpus} whole GPU${h.wholeGpus === 1 ? '' : 's'}` : '',
    h.nodes ? `${h.nodes} whole node${h.nodes === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  if (!parts.length) return 'nothing';
  return parts.join('; ') + (r?.releasing ? ' (releasing)' : '');
}

/** A virtual cluster's workload limits in one line; 0 is no limit. */
export function describeLimits(q: VirtualCluster['quota']): string {
  const parts = [
    q?.cpu_milli ? `CPU ${formatCpuMilli(q.cpu_milli)}` : '',
    q?.memory_mib ? `memory ${formatMiB(q.memory_mib)}` : '',
    q?.pods ? `${q.pods} pods` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'none';
}

// Presentation rules for virtual clusters shared by the list and detail pages.
import type { Reservation, VirtualCluster } from '../api/types';

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

// Presentation rules for a virtual cluster's pods that do not run.
import type { VirtualPod } from '../api/types';
import { formatTime } from './quantity';

/**
 * Since when a pod has been as it is: the time of the condition that says
 * why, when the pod has one with a time; else when it was created, said so
 * (a waiting container has no condition, and the syncer's refusal sets none);
 * '—' when neither is known.
 */
export function describeSince(pod: VirtualPod): string {
  if (pod.since) return formatTime(pod.since);
  if (pod.create_time) return `created ${formatTime(pod.create_time)}`;
  return '—';
}

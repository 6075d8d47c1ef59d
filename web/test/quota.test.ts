import { test } from 'node:test';
import assert from 'node:assert/strict';
import { capacityKindOf, COUNTED_STATES, countsByState, holdings, quotaRows, remaining } from '../src/lib/quota';
import type { VirtualCluster } from '../src/api/types';

test('quota rows: int64 usage strings against limits; absent limits are unlimited', () => {
  const rows = quotaRows({ tenant: 'acme', limits: { gpu_milli: 4000, vclusters: 5 }, usage: { gpu_milli: '929', vclusters: '2', cpu_milli: '0', memory_mib: '0', pods: '0' } });
  const gpu = rows.find((r) => r.key === 'gpu_milli')!;
  assert.deepEqual([gpu.used, gpu.limit, remaining(gpu)], [929, 4000, 3071]);
  const cpu = rows.find((r) => r.key === 'cpu_milli')!;
  assert.equal(cpu.limit, null);
  assert.equal(remaining(cpu), null);
  assert.equal(rows.length, 5);
});

test('a limit of 0 allows none, and usage over a lowered limit leaves 0, not a negative', () => {
  const rows = quotaRows({ limits: { pods: 0, gpu_milli: 1000 }, usage: { pods: '0', gpu_milli: '1500' } });
  assert.equal(rows.find((r) => r.key === 'pods')!.limit, 0);
  assert.equal(remaining(rows.find((r) => r.key === 'gpu_milli')!), 0);
});

test('holdings sum reservations per kind, MIG per profile', () => {
  const vcs: VirtualCluster[] = [
    { name: 'a', reservation: { shares: [{ node: 't4-0', gpu: 0, milli_gpu: 500, gpu_memory_mib: 8000 }], mig: [], gpus: [], nodes: [] } },
    { name: 'b', reservation: { mig: [{ profile: '3g.40gb' }, { profile: '3g.40gb' }, { profile: '1g.10gb' }] } },
    { name: 'c', reservation: { gpus: [{ node: 'a', gpu: 0 }, { node: 'a', gpu: 1 }], nodes: ['h100-3'] } },
    { name: 'd' },
  ];
  const h = holdings(vcs);
  assert.equal(h.shares, 1);
  assert.equal(h.sharedMilli, 500);
  assert.equal(h.sharedMemoryMib, 8000);
  assert.deepEqual(h.migByProfile, { '3g.40gb': 2, '1g.10gb': 1 });
  assert.equal(h.wholeGpus, 2);
  assert.equal(h.nodes, 1);
});

test('counts by state: READY is the quota’s total less the states counted, never below 0', () => {
  assert.deepEqual(countsByState(1000, { PROVISIONING: 2, FAILED: 1 }), { PROVISIONING: 2, READY: 997, SLEEPING: 0, DELETING: 0, FAILED: 1 });
  assert.equal(countsByState(0, {}).READY, 0);
  // A virtual cluster created between the quota read and the state counts.
  assert.equal(countsByState(1, { PROVISIONING: 2 }).READY, 0);
  assert.deepEqual(COUNTED_STATES, ['PROVISIONING', 'SLEEPING', 'DELETING', 'FAILED']);
});

test('tier GPU sharing selects the one capacity kind', () => {
  assert.equal(capacityKindOf('FRACTIONAL'), 'shared');
  assert.equal(capacityKindOf('MIG'), 'mig');
  assert.equal(capacityKindOf('WHOLE_GPU'), 'gpus');
  assert.equal(capacityKindOf('WHOLE_NODE'), 'nodes');
  assert.equal(capacityKindOf('GPU_SHARING_UNSPECIFIED'), null);
});

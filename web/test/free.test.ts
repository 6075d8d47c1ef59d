import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freeHints, freeRows } from '../src/lib/free';
import type { FreeCapacity } from '../src/api/types';

const mig: FreeCapacity = {
  gpu_sharing: 'MIG',
  mig: [
    { model: 'H100-80GB', profile: '1g.10gb', count: 64 },
    { model: 'H100-80GB', profile: '3g.40gb', count: 32 },
    { model: 'A100-80GB', profile: '3g.40gb', count: 2 },
  ],
  gpus: [], nodes: [], shared: [],
};

test('the Overview lists what the server says is free, one row per model and profile', () => {
  assert.deepEqual(freeRows('mig', mig).map((r) => [r.key, r.label, r.value]), [
    ['H100-80GB/1g.10gb', 'MIG 1g.10gb on H100-80GB', '64 instances'],
    ['H100-80GB/3g.40gb', 'MIG 3g.40gb on H100-80GB', '32 instances'],
    ['A100-80GB/3g.40gb', 'MIG 3g.40gb on A100-80GB', '2 instances'],
  ]);
  // gpu_memory_mib is int64: a string in protobuf's JSON.
  const shared: FreeCapacity = { shared: [{ model: 'T4', gpus: 3, milli_gpu: 2500, largest_milli_gpu: 1000, gpu_memory_mib: '30000', largest_gpu_memory_mib: 15000 }] };
  assert.deepEqual(freeRows('shared', shared).map((r) => r.value), ['2.5 GPU on 3 GPUs, at most 1 on one; 30000 MiB GPU memory, at most 15000 MiB on one']);
  assert.deepEqual(freeRows('nodes', { nodes: [] }).map((r) => r.value), ['nothing']);
});

test('beside a MIG row: its profile’s count follows the row’s model; other rows get their own', () => {
  const v = { 'capacity.mig[0].profile': '3g.40gb', 'capacity.mig[1].profile': '3g.40gb', 'capacity.mig[1].model': 'a100-80gb' };
  const h = freeHints('mig', mig, v);
  assert.equal(h['capacity.mig[0].count'], 'Free now: 34 × 3g.40gb.');
  assert.equal(h['capacity.mig[1].count'], 'Free now: 2 × 3g.40gb on a100-80gb.');
  assert.equal(h['capacity.mig[0].model'], 'Models with 3g.40gb free now: H100-80GB 32, A100-80GB 2.');
  assert.equal(h['capacity.mig[1].profile'], 'Free now on a100-80gb: 3g.40gb 2 (in the current MIG layouts).');
  assert.equal(freeHints('mig', mig, { 'capacity.mig[0].profile': '7g.80gb' })['capacity.mig[0].count'], 'Free now: 0 × 7g.80gb.');
});

test('beside whole GPUs, nodes and shares: counts by the typed model; GPU memory: the most on one GPU and the total', () => {
  const gpus: FreeCapacity = { gpus: [{ model: 'A100-80GB', count: 16 }, { model: 'T4', count: 1 }] };
  assert.equal(freeHints('gpus', gpus, {})['capacity.gpus.count'], 'Free now: 17 GPUs.');
  assert.equal(freeHints('gpus', gpus, { 'capacity.gpus.model': 'T4' })['capacity.gpus.count'], 'Free now: 1 T4 GPU.');
  assert.equal(freeHints('nodes', { nodes: [] }, {})['capacity.nodes.model'], 'Models free now: none.');
  const shared = freeHints('shared', {
    shared: [
      { model: 'T4', gpus: 2, milli_gpu: 1200, largest_milli_gpu: 700, gpu_memory_mib: '20000', largest_gpu_memory_mib: 12000 },
      { model: 'A100-80GB', gpus: 1, milli_gpu: 1000, largest_milli_gpu: 1000, gpu_memory_mib: '81920', largest_gpu_memory_mib: 81920 },
    ],
  }, {});
  assert.equal(shared['capacity.shared.milli_gpu'], 'Free now: 2200 thousandths on 3 GPUs, at most 1000 on one GPU.');
  assert.equal(shared['capacity.shared.gpu_memory_mib'], 'Free now: at most 81920 MiB on one GPU, 101920 MiB on 3 GPUs in all.');
});

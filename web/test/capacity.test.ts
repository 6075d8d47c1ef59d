import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addMigRow, capacityBody, capacityInputs, describeCapacity, formValuesOf, migRowCount, removeMigRow } from '../src/lib/capacity';
import { conditionSummary, describeHeld, describeLimits, describeReservation, filterVClusters, pollIntervalMs } from '../src/lib/vclusters';

test('each tier kind offers only its own inputs: shared has no whole-GPU or MIG field', () => {
  const shared = capacityInputs('shared', {}).map((i) => i.field);
  assert.ok(shared.every((f) => f.startsWith('capacity.shared.')));
  for (const kind of ['mig', 'gpus', 'nodes'] as const) assert.ok(capacityInputs(kind, {}).every((i) => i.field.startsWith(`capacity.${kind}`)));
});

test('the request body sets exactly the tier kind', () => {
  const v = { 'capacity.shared.milli_gpu': '500', 'capacity.shared.gpu_memory_mib': '8000', 'capacity.gpus.count': '2' };
  assert.deepEqual(capacityBody('shared', v), { shared: { milli_gpu: 500, gpu_memory_mib: 8000 } });
  assert.deepEqual(capacityBody('mig', { 'capacity.mig[0].profile': '3g.40gb', 'capacity.mig[0].count': '2' }), { mig: [{ profile: '3g.40gb', count: 2, model: '' }] });
  assert.deepEqual(capacityBody('nodes', { 'capacity.nodes.count': ' 1 ', 'capacity.nodes.model': 'H100-80GB' }), { nodes: { count: 1, model: 'H100-80GB' } });
});

test('malformed numbers are sent as typed so the server names the field', () => {
  const b = capacityBody('gpus', { 'capacity.gpus.count': 'two' });
  assert.ok(Number.isNaN(b.gpus!.count));
});

test('resize starts from the current capacity and workload quota', () => {
  const v = formValuesOf({ display_name: 'T', capacity: { mig: [{ profile: '1g.10gb', count: 3, model: '' }] }, quota: { cpu_milli: 0, memory_mib: 2048, pods: 0 } });
  assert.equal(v['capacity.mig[0].count'], '3');
  assert.equal(v['capacity.mig[0].profile'], '1g.10gb');
  assert.equal(v['quota.memory_mib'], '2048');
  assert.equal(v['quota.cpu_milli'], '', '0 = no limit shows empty');
});

test('capacity reads as one line', () => {
  assert.equal(describeCapacity({ shared: { milli_gpu: 500, gpu_memory_mib: 8000 }, mig: [] }), '0.5 GPU share, 8000 MiB');
  assert.equal(describeCapacity({ mig: [{ profile: '3g.40gb', count: 2 }] }), '2× 3g.40gb');
  assert.equal(describeCapacity({ gpus: { count: 1, model: 'A100-80GB' } }), '1 GPU A100-80GB');
  assert.equal(describeCapacity({ nodes: { count: 2 } }), '2 nodes');
});

test('list helpers: condition summary, filter, poll interval', () => {
  const ready = { name: 'train', display_name: 'Training', state: 'READY' as const, conditions: [{ type: 'Ready', status: 'True' }] };
  const prov = { name: 'dev', state: 'PROVISIONING' as const, conditions: [{ type: 'Ready', status: 'True' }, { type: 'QueueReady', status: 'False', reason: 'Waiting' }] };
  assert.equal(conditionSummary(ready), '1/1 true');
  assert.equal(conditionSummary(prov), 'QueueReady False: Waiting');
  assert.deepEqual(filterVClusters([ready, prov], 'TRAIN', '').map((v) => v.name), ['train']);
  assert.deepEqual(filterVClusters([ready, prov], '', 'PROVISIONING').map((v) => v.name), ['dev']);
  assert.equal(pollIntervalMs([ready, prov]), 2000);
  assert.equal(pollIntervalMs([ready]), 10000);
});

test('a reservation reads as where it sits', () => {
  assert.equal(describeReservation({ shares: [{ node: 't4-0', gpu: 0, milli_gpu: 500 }], mig: [], gpus: [], nodes: [] }), '500 milli-GPU on t4-0 GPU 0');
  assert.equal(describeReservation({ mig: [{ node: 'h100-0', gpu: 2, profile: '3g.40gb' }, { node: 'h100-0', gpu: 3, profile: '1g.10gb' }] }), '3g.40gb on h100-0 GPU 2; 1g.10gb on h100-0 GPU 3');
  assert.equal(describeReservation({ gpus: [{ node: 'a100-0', gpu: 1 }], nodes: ['h100-3'] }), 'a100-0 GPU 1; node h100-3');
  assert.equal(describeReservation({}), 'nothing');
  assert.equal(describeReservation(undefined), 'nothing');
});

test('MIG rows: one at least, added at the end, removed with later rows moving up to keep the request’s indices', () => {
  assert.equal(migRowCount({}), 1);
  let v = addMigRow({ 'capacity.mig[0].profile': '3g.40gb', 'capacity.mig[0].count': '1' }, '1g.10gb');
  v = addMigRow(v, '2g.20gb');
  v['capacity.mig[2].count'] = '4';
  assert.equal(migRowCount(v), 3);
  assert.deepEqual(capacityInputs('mig', v).map((i) => i.label).slice(3, 6), ['MIG profile, row 2', 'MIG instances, row 2', 'GPU model, row 2']);
  const removed = removeMigRow(v, 1);
  assert.equal(migRowCount(removed), 2);
  assert.deepEqual(capacityBody('mig', removed), { mig: [{ profile: '3g.40gb', count: 1, model: '' }, { profile: '2g.20gb', count: 4, model: '' }] });
  assert.equal(removeMigRow({ 'capacity.mig[0].profile': 'x' }, 0)['capacity.mig[0].profile'], 'x', 'the only row stays');
});

test('resize shows every MIG row of the virtual cluster', () => {
  const v = formValuesOf({ capacity: { mig: [{ profile: '3g.40gb', count: 1, model: 'H100-80GB' }, { profile: '1g.10gb', count: 2 }] } });
  assert.equal(migRowCount(v), 2);
  assert.deepEqual(capacityBody('mig', v).mig, [{ profile: '3g.40gb', count: 1, model: 'H100-80GB' }, { profile: '1g.10gb', count: 2, model: '' }]);
});

test('what a virtual cluster holds and its limits read as amounts', () => {
  assert.equal(describeHeld({ mig: [{ profile: '3g.40gb' }, { profile: '1g.10gb' }, { profile: '3g.40gb' }] }), '1× 1g.10gb, 2× 3g.40gb');
  assert.equal(describeHeld({ shares: [{ milli_gpu: 300, gpu_memory_mib: 1024 }, { milli_gpu: 200, gpu_memory_mib: 1024 }], releasing: true }), '500 milli-GPU and 2 GiB on 2 GPUs (releasing)');
  assert.equal(describeHeld({ gpus: [{ node: 'a', gpu: 0 }] }), '1 whole GPU');
  assert.equal(describeHeld(undefined), 'nothing');
  assert.equal(describeLimits({ cpu_milli: 1500, memory_mib: 0, pods: 10 }), 'CPU 1.5, 10 pods');
  assert.equal(describeLimits(undefined), 'none');
});

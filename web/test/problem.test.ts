import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, fieldErrors, problemFrom } from '../src/api/problem';
import { quotaAliases } from '../src/lib/capacity';

const body = {
  type: 'about:blank', title: 'Bad Request', status: 400, code: 'INVALID_ARGUMENT', message: 'capacity.mig[0].count: must be positive',
  request_id: 'r1', violations: [{ field: 'capacity.mig[0].count', description: 'must be positive' }],
};

test('problem+json becomes an ApiError with its code, request id and violations', () => {
  const e = problemFrom(400, body);
  assert.ok(e instanceof ApiError);
  assert.equal(e.code, 'INVALID_ARGUMENT');
  assert.equal(e.message, 'capacity.mig[0].count: must be positive');
  assert.equal(e.requestId, 'r1');
  assert.deepEqual(e.violations, [{ field: 'capacity.mig[0].count', description: 'must be positive' }]);
});

test('a body that is not problem+json still gives a message', () => {
  assert.equal(problemFrom(502, '<html>bad gateway</html>').message, '<html>bad gateway</html>');
  assert.equal(problemFrom(503, undefined, 'Service Unavailable').message, 'Service Unavailable');
  assert.equal(problemFrom(500, { title: 'Internal Server Error' }).message, 'Internal Server Error');
  assert.deepEqual(problemFrom(400, { violations: [null, 3] }).violations, []);
});

test('violations go to the exact field, or the longest form field containing them', () => {
  const fe = fieldErrors(
    [
      { field: 'capacity.mig[0].count', description: 'must be positive' },
      { field: 'name', description: 'taken' },
      { field: 'capacity.shared.milli_gpu.x', description: 'deep' },
      { field: 'labels.team', description: 'nowhere' },
    ],
    ['name', 'capacity.mig[0].count', 'capacity.shared', 'capacity.shared.milli_gpu'],
  );
  assert.deepEqual(fe.byField, { 'capacity.mig[0].count': ['must be positive'], name: ['taken'], 'capacity.shared.milli_gpu': ['deep'] });
  assert.deepEqual(fe.unplaced, [{ field: 'labels.team', description: 'nowhere' }]);
});

test('a prefix that is not a path step does not match (name vs name_suffix)', () => {
  const fe = fieldErrors([{ field: 'name_suffix', description: 'x' }], ['name']);
  assert.deepEqual(fe.byField, {});
  assert.equal(fe.unplaced.length, 1);
});

test('a violation on a parent goes to the first input under it', () => {
  const fe = fieldErrors([{ field: 'capacity.mig', description: 'the shared tier holds no MIG' }], ['name', 'capacity.mig[0].profile', 'capacity.mig[0].count']);
  assert.deepEqual(fe.byField, { 'capacity.mig[0].profile': ['the shared tier holds no MIG'] });
});

test('the tenant quota refusal lands beside the capacity input that asked for it', () => {
  const v = [{ field: 'tenant.quota.gpu_milli', description: '50.000 GPU-equivalents requested, 3.500 left' }];
  const shared = fieldErrors(v, ['name', 'capacity.shared.milli_gpu', 'capacity.shared.gpu_memory_mib'], quotaAliases('shared'));
  assert.deepEqual(shared.byField, { 'capacity.shared.milli_gpu': ['50.000 GPU-equivalents requested, 3.500 left'] });
  const mig = fieldErrors(v, ['name', 'capacity.mig[0].profile', 'capacity.mig[0].count'], quotaAliases('mig'));
  assert.deepEqual(Object.keys(mig.byField), ['capacity.mig[0].count']);
});

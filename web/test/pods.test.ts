import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeSince } from '../src/lib/pods';

test('since: the deciding condition’s time when the pod has one', () => {
  assert.equal(describeSince({ name: 'web', since: '2026-11-29T10:00:01Z', create_time: '2026-11-29T09:00:00Z' }), '2026-11-29 10:00 UTC');
});

test('since: a pod without such a time (a refusal, a waiting container) says when it was created', () => {
  assert.equal(describeSince({ name: 'web', reason: 'SyncRefused', create_time: '2026-11-29T09:00:00Z' }), 'created 2026-11-29 09:00 UTC');
  assert.equal(describeSince({ name: 'web', since: '', create_time: '2026-11-29T09:00:00Z' }), 'created 2026-11-29 09:00 UTC');
});

test('since: neither time known is a dash, not an empty cell', () => {
  assert.equal(describeSince({ name: 'web' }), '—');
});

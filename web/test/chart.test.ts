import { test } from 'node:test';
import assert from 'node:assert/strict';
import { barLayout, bucketLabel, fillBuckets, labelled, niceScale, yOf } from '../src/lib/chart';

const H = 3_600_000;
const T0 = Date.parse('2026-11-29T00:00:00Z');

test('every bucket of the window, with the report’s figures where septad has them and 0 elsewhere', () => {
  const items = [
    { start: '2026-11-29T01:00:00Z', allocated_gpu_hours: 1, used_gpu_hours: 0.5, measured_gpu_hours: 0.9 },
    { start: '2026-11-29T03:00:00Z', allocated_gpu_hours: 2 },
  ];
  const b = fillBuckets(items, T0, T0 + 4 * H, H, T0 + 2.5 * H);
  assert.equal(b.length, 4);
  assert.deepEqual(b.map((x) => [x.allocated, x.used, x.measured]), [[0, 0, 0], [1, 0.5, 0.9], [0, 0, 0], [2, 0, 0]]);
  assert.deepEqual(b.map((x) => x.future), [false, false, false, true]);
  assert.equal(b[1]!.startMs, T0 + H);
  assert.equal(b[1]!.endMs, T0 + 2 * H);
});

test('the last bucket is cut at the window’s end; a degenerate window has none', () => {
  const b = fillBuckets([], T0, T0 + 2.5 * H, H, T0);
  assert.deepEqual(b.map((x) => (x.endMs - x.startMs) / H), [1, 1, 0.5]);
  assert.deepEqual(fillBuckets([], T0, T0, H, T0), []);
  assert.deepEqual(fillBuckets([], T0, T0 + H, 0, T0), []);
});

test('a nice scale: 0 to at least the largest value in steps of 1, 2, 2.5 or 5 × 10^k', () => {
  assert.deepEqual(niceScale(1), { top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] });
  assert.deepEqual(niceScale(7.3), { top: 8, ticks: [0, 2, 4, 6, 8] });
  assert.deepEqual(niceScale(0.0167), { top: 0.02, ticks: [0, 0.005, 0.01, 0.015, 0.02] });
  const s = niceScale(24);
  assert.ok(s.top >= 24 && s.ticks.length >= 4 && s.ticks.length <= 6, JSON.stringify(s));
  assert.deepEqual(niceScale(0.3), { top: 0.3, ticks: [0, 0.1, 0.2, 0.3] }, 'no float noise');
  assert.deepEqual(niceScale(0).top, 1, 'nothing recorded: 0..1');
  assert.deepEqual(niceScale(NaN).top, 1);
  for (const max of [0.001, 0.3, 3, 99, 1234, 1e6]) {
    const { top, ticks } = niceScale(max);
    assert.ok(top >= max, `${max}`);
    assert.ok(ticks.length >= 3 && ticks.length <= 6, `${max}: ${ticks}`);
    assert.equal(ticks[0], 0);
  }
});

test('values map to y from the bottom up, clamped to the axis', () => {
  assert.equal(yOf(0, 10, 200), 200);
  assert.equal(yOf(10, 10, 200), 0);
  assert.equal(yOf(2.5, 10, 200), 150);
  assert.equal(yOf(20, 10, 200), 0, 'clamped above');
  assert.equal(yOf(-1, 10, 200), 200, 'clamped below');
  assert.equal(yOf(1, 0, 200), 200);
});

test('two bars per bucket, inside the bucket’s band', () => {
  const { band, bar, x } = barLayout(4, 400);
  assert.equal(band, 100);
  assert.equal(bar, 40);
  assert.equal(x(0, 0), 10);
  assert.equal(x(0, 1), 50);
  assert.equal(x(3, 1) + bar, 390, 'the last bar ends 10 % of a band before the edge');
  const one = barLayout(1, 600);
  assert.equal(one.bar, 40, 'at most 40 wide');
  assert.equal(one.x(0, 0), 260, 'the pair centred in its band');
  assert.equal(one.x(0, 1) + one.bar, 340);
});

test('time labels in UTC, thinned to at most 8', () => {
  assert.equal(bucketLabel(T0 + 13 * H, H, 24 * H), '13:00');
  assert.equal(bucketLabel(T0, H, 24 * H), '11-29 00:00', 'midnight names the day');
  assert.equal(bucketLabel(T0 + 18 * H, 6 * H, 7 * 24 * H), '11-29 18:00', 'over days: date and time');
  assert.equal(bucketLabel(T0, 24 * H, 30 * 24 * H), '11-29');
  const on = labelled(30);
  assert.deepEqual(Array.from({ length: 30 }, (_, i) => i).filter(on), [0, 4, 8, 12, 16, 20, 24, 28]);
  assert.deepEqual(Array.from({ length: 5 }, (_, i) => i).filter(labelled(5)), [0, 1, 2, 3, 4]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DAY_MS, expiresWithin, formatCpuMilli, formatGpuMilli, formatMiB, formatSeconds, formatTime, parseProtoDuration, toInt } from '../src/lib/quantity';

test('toInt reads int64 strings and int32 numbers, 0 for absent or garbage', () => {
  assert.equal(toInt('500'), 500);
  assert.equal(toInt(7), 7);
  assert.equal(toInt(undefined), 0);
  assert.equal(toInt(''), 0);
  assert.equal(toInt('x'), 0);
});

test('GPU thousandths print as GPU-equivalents without trailing zeros', () => {
  assert.equal(formatGpuMilli(429), '0.429');
  assert.equal(formatGpuMilli('4000'), '4');
  assert.equal(formatGpuMilli(2500), '2.5');
  assert.equal(formatGpuMilli(0), '0');
});

test('CPU millicores and memory MiB', () => {
  assert.equal(formatCpuMilli(2000), '2');
  assert.equal(formatCpuMilli(1500), '1.5');
  assert.equal(formatMiB(512), '512 MiB');
  assert.equal(formatMiB(8192), '8 GiB');
  assert.equal(formatMiB(1536), '1.5 GiB');
  assert.equal(formatMiB(2 * 1024 * 1024), '2 TiB');
});

test('protobuf durations and their display', () => {
  assert.equal(parseProtoDuration('3600s'), 3600);
  assert.equal(parseProtoDuration('0.5s'), 0.5);
  assert.ok(Number.isNaN(parseProtoDuration('1h')));
  assert.equal(formatSeconds(3600), '1h');
  assert.equal(formatSeconds(5400), '1h30m');
  assert.equal(formatSeconds(86400 + 60), '1d1m');
  assert.equal(formatSeconds(900), '15m');
  assert.equal(formatSeconds(NaN), '—');
});

test('formatTime prints UTC minutes; expiresWithin takes only future times inside the window', () => {
  assert.equal(formatTime('2026-11-29T22:00:00Z'), '2026-11-29 22:00 UTC');
  assert.equal(formatTime(undefined), '');
  const now = Date.parse('2026-11-29T10:00:00Z');
  assert.ok(expiresWithin('2026-11-29T22:00:00Z', now, DAY_MS));
  assert.ok(!expiresWithin('2026-12-01T10:00:00Z', now, DAY_MS));
  assert.ok(!expiresWithin('2026-11-29T09:00:00Z', now, DAY_MS), 'already expired');
  assert.ok(!expiresWithin(undefined, now, DAY_MS), 'never expires');
});

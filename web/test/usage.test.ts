import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  autoStep,
  coverageText,
  DEFAULT_PRESET,
  efficiencyText,
  formatCost,
  formatGpuHours,
  formatShare,
  parseInstant,
  parseStep,
  perStep,
  presetWindow,
  stepText,
  stepWords,
  unmeasuredHours,
  windowFromQuery,
  windowQuery,
} from '../src/lib/usage';

const NOW = Date.parse('2026-11-29T13:37:12.345Z');
const q = (s: string) => new URLSearchParams(s);

test('presets lie on septad’s hour or day grid and end after now', () => {
  assert.deepEqual(
    [presetWindow('24h', NOW).start, presetWindow('24h', NOW).end, presetWindow('24h', NOW).step],
    ['2026-11-28T14:00:00Z', '2026-11-29T14:00:00Z', '1h'],
  );
  const week = presetWindow('7d', NOW);
  assert.deepEqual([week.start, week.end, week.step], ['2026-11-22T14:00:00Z', '2026-11-29T14:00:00Z', '6h']);
  const days = presetWindow('30d', NOW);
  assert.deepEqual([days.start, days.end, days.step], ['2026-10-31T00:00:00Z', '2026-11-30T00:00:00Z', '1d']);
  const month = presetWindow('month', NOW);
  assert.deepEqual([month.start, month.end, month.step], ['2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z', '1d']);
  const dec = presetWindow('month', Date.parse('2026-12-31T23:59:59Z'));
  assert.deepEqual([dec.start, dec.end], ['2026-12-01T00:00:00Z', '2027-01-01T00:00:00Z'], 'December runs into the next year');
  for (const w of [presetWindow('24h', NOW), week, days, month]) {
    assert.ok(w.endMs > NOW && w.startMs < NOW, w.preset);
    assert.equal((w.endMs - w.startMs) % w.stepMs, 0, `${w.preset}: whole buckets`);
  }
  // An instant exactly on the hour: the hour that starts now is the last bar.
  assert.equal(presetWindow('24h', Date.parse('2026-11-29T13:00:00Z')).end, '2026-11-29T14:00:00Z');
});

test('the window comes from the query: a preset, an exact one, or the default', () => {
  assert.equal(windowFromQuery(q(''), NOW).preset, DEFAULT_PRESET);
  assert.equal(windowFromQuery(q(''), NOW).invalid, undefined);
  assert.equal(windowFromQuery(q('window=30d'), NOW).step, '1d');
  const bad = windowFromQuery(q('window=1y'), NOW);
  assert.equal(bad.preset, DEFAULT_PRESET);
  assert.match(bad.invalid!, /"1y" is not a window/);

  const exact = windowFromQuery(q('start=2026-11-29T10:00:00Z&end=2026-11-29T10:01:00Z&step=1m'), NOW);
  assert.deepEqual([exact.preset, exact.start, exact.end, exact.step, exact.invalid], ['custom', '2026-11-29T10:00:00Z', '2026-11-29T10:01:00Z', '1m', undefined]);
  const offset = windowFromQuery(q('start=2026-11-29T11:00:00%2B01:00&end=2026-11-30'), NOW);
  assert.deepEqual([offset.start, offset.end, offset.step], ['2026-11-29T10:00:00Z', '2026-11-30T00:00:00Z', '15m'], 'offsets become UTC; a date is midnight UTC; a step of its own');
});

test('a window septad would refuse falls back to the default, saying why', () => {
  const cases: [string, RegExp][] = [
    ['start=yesterday&end=2026-11-29T10:00:00Z', /start "yesterday"/],
    ['start=2026-11-29T10:00:00Z', /end ""/],
    ['start=2026-11-29T10:00:30Z&end=2026-11-29T11:00:00Z', /whole minutes/],
    ['start=2026-11-29T10:00:00Z&end=2026-11-29T10:00:00Z', /after the start/],
    ['start=2025-01-01&end=2026-11-29', /at most 400 days/],
  ];
  for (const [query, why] of cases) {
    const w = windowFromQuery(q(query), NOW);
    assert.equal(w.preset, DEFAULT_PRESET, query);
    assert.match(w.invalid ?? '', why, query);
  }
  const tooFine = windowFromQuery(q('start=2026-11-01&end=2026-11-29&step=1m'), NOW);
  assert.deepEqual([tooFine.preset, tooFine.step], ['custom', '1d'], 'a step giving more than 2,000 buckets is replaced');
  assert.match(tooFine.invalid!, /step "1m"/);
  assert.equal(windowFromQuery(q('start=2026-11-01&end=2026-11-29&step=2x'), NOW).step, '1d');
});

test('a window’s query names it, and reads back as the same window', () => {
  assert.equal(windowQuery(presetWindow('24h', NOW)), '?window=24h');
  const exact = windowFromQuery(q('start=2026-11-29T10:00:00Z&end=2026-11-29T12:00:00Z&step=5m'), NOW);
  const query = windowQuery(exact);
  assert.equal(query, '?start=2026-11-29T10%3A00%3A00Z&end=2026-11-29T12%3A00%3A00Z&step=5m');
  const again = windowFromQuery(q(query.slice(1)), NOW);
  assert.deepEqual([again.start, again.end, again.step], [exact.start, exact.end, exact.step]);
});

test('steps: septad’s syntax, its text, words, and the automatic one', () => {
  assert.equal(parseStep('15m'), 15 * 60_000);
  assert.equal(parseStep('6h'), 6 * 3_600_000);
  assert.equal(parseStep('7d'), 7 * 86_400_000);
  for (const bad of ['0h', '1s', 'h', '1.5h', '-1d', '', null, '1234567d']) assert.equal(parseStep(bad), null, String(bad));
  assert.equal(stepText(86_400_000), '1d');
  assert.equal(stepText(6 * 3_600_000), '6h');
  assert.equal(stepText(90 * 60_000), '90m');
  assert.equal(stepWords(3_600_000), '1 hour');
  assert.equal(stepWords(6 * 3_600_000), '6 hours');
  assert.equal(stepWords(60_000), '1 minute');
  assert.equal(perStep(60_000), 'per minute');
  assert.equal(perStep(6 * 3_600_000), 'per 6 hours');
  assert.equal(perStep(10 * 86_400_000), 'per 10 days');
  assert.equal(autoStep(60 * 60_000), 60_000, 'an hour: by the minute');
  assert.equal(autoStep(61 * 60_000), 5 * 60_000);
  assert.equal(autoStep(2 * 86_400_000), 3_600_000);
  assert.equal(autoStep(400 * 86_400_000), 7 * 86_400_000);
});

test('GPU-hours, shares and costs for people', () => {
  assert.equal(formatGpuHours(undefined), '0');
  assert.equal(formatGpuHours(1 / 60), '0.0167');
  assert.equal(formatGpuHours(0.000277777), '0.000278');
  assert.equal(formatGpuHours(0.5), '0.5');
  assert.equal(formatGpuHours(1.234), '1.23');
  assert.equal(formatGpuHours(24), '24.0');
  assert.equal(formatGpuHours(12345.6), '12,346');
  assert.equal(formatShare(0.486), '48.6 %');
  assert.equal(formatShare(0.5), '50 %');
  assert.equal(formatShare(0.99999), '99.9 %', 'rounded down: never more than it is');
  assert.equal(formatShare(1.2), '120 %', 'a share may use more than its part');
  assert.equal(efficiencyText(undefined), 'not measured');
  assert.equal(efficiencyText(0.5), '50 %');
  assert.equal(formatCost(3.6, 'USD'), 'USD 3.60');
  assert.equal(formatCost(undefined, 'EUR'), 'EUR 0.00');
  assert.equal(formatCost(1234.5, 'USD'), 'USD 1,234.50');
  assert.equal(formatCost(2, 'bogus!'), 'bogus! 2.00', 'a code Intl refuses is still shown');
});

test('coverage below 1 is said as time not measured, never as idle', () => {
  assert.equal(coverageText(1, 2), 'measured all the time');
  assert.equal(coverageText(0.8, 2), 'measured 80 % of the time');
  assert.equal(coverageText(0.9996, 2), 'measured 99.9 % of the time');
  assert.equal(coverageText(undefined, 2), 'not measured', 'protobuf omits a coverage of 0');
  assert.equal(coverageText(undefined, undefined), '—', 'nothing allocated');
  assert.equal(unmeasuredHours({ allocated_gpu_hours: 2, measured_gpu_hours: 1.6 }), 0.3999999999999999);
  assert.equal(unmeasuredHours({ allocated_gpu_hours: 1, measured_gpu_hours: 1.0000001 }), 0);
  assert.equal(unmeasuredHours({}), 0);
});

test('instants: RFC 3339 or a date; anything else is refused', () => {
  assert.equal(parseInstant('2026-11-29'), Date.parse('2026-11-29T00:00:00Z'));
  assert.equal(parseInstant('2026-11-29T10:00:00.5Z'), Date.parse('2026-11-29T10:00:00.500Z'));
  for (const bad of ['2026-11-29T10:00', 'now', '1764410400', '', null]) assert.equal(parseInstant(bad), null, String(bad));
});

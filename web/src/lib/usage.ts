// The usage pages' windows and wording (pure; test/usage.test.ts). A window
// is in the URL so that a report can be shared: `?window=24h|7d|30d|month`,
// or an exact one `?start=…&end=…[&step=…]` (RFC 3339 or a date, UTC). All
// windows are UTC and lie on the grid septad keeps (docs/usage.md: whole
// hours or days read the hour or day table; any whole minute the minutes,
// kept 35 days).

export type Preset = '24h' | '7d' | '30d' | 'month';

export const PRESETS: { key: Preset; label: string }[] = [
  { key: '24h', label: 'Last 24 hours' },
  { key: '7d', label: 'Last 7 days' },
  { key: '30d', label: 'Last 30 days' },
  { key: 'month', label: 'This month' },
];

/** A week: long enough to show a pattern, short enough to read by the hour (6 h steps). */
export const DEFAULT_PRESET: Preset = '7d';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** septad's limits on a report: the window, and buckets per report. */
export const MAX_WINDOW_DAYS = 400;
export const MAX_BUCKETS = 2000;
/** Bars a custom window gets at most when the link names no step. */
const AUTO_BUCKETS = 60;

export interface UsageWindow {
  preset: Preset | 'custom';
  /** RFC 3339 in UTC, whole minutes: "2026-11-29T13:00:00Z" */
  start: string;
  end: string;
  /** septad's step: "1h", "6h", "1d" */
  step: string;
  startMs: number;
  endMs: number;
  stepMs: number;
  /** Why the link's window was not used as given (then the default or a step of our own is). */
  invalid?: string;
}

/** ms → "2026-11-29T13:00:00Z" (no fraction: septad's windows are whole minutes). */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** "15m", "6h", "1d" → ms; null unless a positive whole number of minutes, hours or days (septad's StepOf). */
export function parseStep(text: string | null | undefined): number | null {
  const m = /^([1-9]\d{0,5})([mhd])$/.exec(text ?? '');
  if (!m) return null;
  return Number(m[1]) * (m[2] === 'm' ? MINUTE_MS : m[2] === 'h' ? HOUR_MS : DAY_MS);
}

/** ms → septad's step text, in the largest whole unit ("1d", "6h", "15m"). */
export function stepText(ms: number): string {
  if (ms % DAY_MS === 0) return `${ms / DAY_MS}d`;
  if (ms % HOUR_MS === 0) return `${ms / HOUR_MS}h`;
  return `${Math.round(ms / MINUTE_MS)}m`;
}

/** The smallest usual step that gives at most 60 bars over `spanMs`. */
export function autoStep(spanMs: number): number {
  for (const s of [MINUTE_MS, 5 * MINUTE_MS, 15 * MINUTE_MS, HOUR_MS, 6 * HOUR_MS, DAY_MS, 7 * DAY_MS]) {
    if (Math.ceil(spanMs / s) <= AUTO_BUCKETS) return s;
  }
  return 7 * DAY_MS;
}

function make(preset: UsageWindow['preset'], startMs: number, endMs: number, stepMs: number, invalid?: string): UsageWindow {
  const w: UsageWindow = { preset, start: rfc3339(startMs), end: rfc3339(endMs), step: stepText(stepMs), startMs, endMs, stepMs };
  if (invalid) w.invalid = invalid;
  return w;
}

/**
 * A preset's window at `now`. Rolling windows end at the end of the current
 * hour (or day) so that they lie on septad's hour (or day) grid and include
 * what was accounted in the last minutes: the last bar is the one under way.
 */
export function presetWindow(preset: Preset, now: number): UsageWindow {
  const hourEnd = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
  const dayEnd = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  switch (preset) {
    case '24h':
      return make(preset, hourEnd - DAY_MS, hourEnd, HOUR_MS);
    case '7d':
      return make(preset, hourEnd - 7 * DAY_MS, hourEnd, 6 * HOUR_MS);
    case '30d':
      return make(preset, dayEnd - 30 * DAY_MS, dayEnd, DAY_MS);
    case 'month': {
      const d = new Date(now);
      return make(preset, Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1), DAY_MS);
    }
  }
}

const INSTANT = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d))?$/i;

/** An RFC 3339 date-time, or a date (midnight UTC), in ms; null otherwise. */
export function parseInstant(text: string | null): number | null {
  if (!text || !INSTANT.test(text)) return null;
  const ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
  return Number.isFinite(ms) ? ms : null;
}

/** The window a page's query asks for; the default preset when it asks for none or for one septad would refuse. */
export function windowFromQuery(query: URLSearchParams, now: number): UsageWindow {
  const preset = query.get('window');
  const rawStart = query.get('start');
  const rawEnd = query.get('end');
  if (rawStart === null && rawEnd === null) {
    if (preset === null) return presetWindow(DEFAULT_PRESET, now);
    const known = PRESETS.find((p) => p.key === preset);
    if (known) return presetWindow(known.key, now);
    return { ...presetWindow(DEFAULT_PRESET, now), invalid: `"${preset}" is not a window this page knows` };
  }
  const fallback = (why: string) => ({ ...presetWindow(DEFAULT_PRESET, now), invalid: why });
  const start = parseInstant(rawStart);
  const end = parseInstant(rawEnd);
  if (start === null) return fallback(`the start "${rawStart ?? ''}" is not an RFC 3339 date-time`);
  if (end === null) return fallback(`the end "${rawEnd ?? ''}" is not an RFC 3339 date-time`);
  if (start % MINUTE_MS || end % MINUTE_MS) return fallback('the start and the end must be whole minutes');
  if (end <= start) return fallback('the end must be after the start');
  if (end - start > MAX_WINDOW_DAYS * DAY_MS) return fallback(`a window is at most ${MAX_WINDOW_DAYS} days`);
  const rawStep = query.get('step');
  if (rawStep !== null) {
    const step = parseStep(rawStep);
    if (step !== null && Math.ceil((end - start) / step) <= MAX_BUCKETS) return make('custom', start, end, step);
    return make('custom', start, end, autoStep(end - start), `the step "${rawStep}" does not fit the window (at most ${MAX_BUCKETS} bars); using another`);
  }
  return make('custom', start, end, autoStep(end - start));
}

/** The query that names `w` ("?window=7d", or the exact start, end and step of a custom one). */
export function windowQuery(w: Pick<UsageWindow, 'preset' | 'start' | 'end' | 'step'>): string {
  if (w.preset !== 'custom') return `?window=${w.preset}`;
  return `?${new URLSearchParams({ start: w.start, end: w.end, step: w.step }).toString()}`;
}

// --- wording of the figures -------------------------------------------------

/**
 * GPU-hours for people: three significant digits below 1 (0.0167), two
 * decimals below 10, one below 100, whole above (with thousands separators).
 * The CSV carries the exact values.
 */
export function formatGpuHours(h: number | undefined): string {
  const x = h ?? 0;
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a < 1) return String(Number(x.toPrecision(3)));
  if (a < 10) return x.toFixed(2);
  if (a < 100) return x.toFixed(1);
  return Math.round(x).toLocaleString('en-US');
}

/** 0.486 → "48.6 %", 0.5 → "50 %"; rounded down, so a share is never shown larger than it is. */
export function formatShare(ratio: number): string {
  const tenths = Math.floor(ratio * 1000 + 1e-6);
  return `${(tenths / 10).toFixed(1).replace(/\.0$/, '')} %`;
}

/** used / measured, or "not measured" when septad measured none of it. */
export function efficiencyText(efficiency: number | undefined): string {
  return efficiency === undefined ? 'not measured' : formatShare(efficiency);
}

/**
 * measured / allocated, in words: time not measured (a missed scrape, an
 * exporter down) is unknown, never idle, so it is said as such.
 */
export function coverageText(coverage: number | undefined, allocated: number | undefined): string {
  if (!allocated) return '—';
  const c = coverage ?? 0;
  if (c >= 1) return 'measured all the time';
  if (c <= 0) return 'not measured';
  return `measured ${formatShare(c)} of the time`;
}

/** Allocated time no sample covers: allocated − measured, not below 0. */
export function unmeasuredHours(item: { allocated_gpu_hours?: number; measured_gpu_hours?: number }): number {
  return Math.max(0, (item.allocated_gpu_hours ?? 0) - (item.measured_gpu_hours ?? 0));
}

/** A cost with its ISO 4217 code ("USD 3.60"); cents, like septactl's table. */
export function formatCost(cost: number | undefined, currency: string | undefined): string {
  const code = currency || 'USD';
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: code, currencyDisplay: 'code' }).format(cost ?? 0).replace(/\u00a0/g, ' ');
  } catch {
    return `${code} ${(cost ?? 0).toFixed(2)}`;
  }
}

/** A step in words: "1 hour", "6 hours", "1 day", "15 minutes". */
export function stepWords(stepMs: number): string {
  const [n, unit] = stepMs % DAY_MS === 0 ? [stepMs / DAY_MS, 'day'] : stepMs % HOUR_MS === 0 ? [stepMs / HOUR_MS, 'hour'] : [Math.round(stepMs / MINUTE_MS), 'minute'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** "per minute", "per 6 hours" */
export function perStep(stepMs: number): string {
  const words = stepWords(stepMs);
  return `per ${words.startsWith('1 ') ? words.slice(2) : words}`;
}

/** "2026-11-29 13:00 UTC" */
export function formatInstant(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

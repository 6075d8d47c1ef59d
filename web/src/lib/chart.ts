// The geometry of the usage chart (pure; test/chart.test.ts): the window's
// buckets with the report's figures in them, a "nice" scale, bar positions,
// and the time labels. components/UsageChart.tsx only draws what this returns.

export interface Bucket {
  startMs: number;
  endMs: number;
  allocated: number;
  used: number;
  measured: number;
  /** begins after now: nothing can be recorded in it yet */
  future: boolean;
}

interface Item {
  start?: string;
  allocated_gpu_hours?: number;
  used_gpu_hours?: number;
  measured_gpu_hours?: number;
}

/**
 * Every bucket of [startMs, endMs) by stepMs (the last one cut at the end),
 * with the figures of the report's item that starts there. septad returns
 * only buckets in which something was held: a missing one held nothing (0).
 */
export function fillBuckets(items: Item[], startMs: number, endMs: number, stepMs: number, nowMs: number): Bucket[] {
  const byStart = new Map<number, Item>();
  for (const i of items) if (i.start) byStart.set(Date.parse(i.start), i);
  const out: Bucket[] = [];
  if (!(stepMs > 0) || !(endMs > startMs)) return out;
  for (let s = startMs; s < endMs; s += stepMs) {
    const i = byStart.get(s);
    out.push({
      startMs: s,
      endMs: Math.min(s + stepMs, endMs),
      allocated: i?.allocated_gpu_hours ?? 0,
      used: i?.used_gpu_hours ?? 0,
      measured: i?.measured_gpu_hours ?? 0,
      future: s > nowMs,
    });
  }
  return out;
}

/** Removes float noise: 0.30000000000000004 → 0.3. */
function clean(x: number): number {
  return Number(x.toPrecision(12));
}

/**
 * An axis from 0 to at least `max` in 3 to 5 steps of 1, 2, 2.5 or 5 × 10^k:
 * top and ticks. A max of 0 (nothing recorded) gives 0..1.
 */
export function niceScale(max: number, targetTicks = 4): { top: number; ticks: number[] } {
  if (!(max > 0) || !Number.isFinite(max)) return { top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] };
  const raw = max / targetTicks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const step = clean((norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag);
  const n = Math.ceil(clean(max / step));
  const ticks = Array.from({ length: n + 1 }, (_, i) => clean(i * step));
  return { top: ticks[ticks.length - 1]!, ticks };
}

/** The y of `value` on an axis of `top` drawn `height` high (SVG: y grows downwards). */
export function yOf(value: number, top: number, height: number): number {
  if (!(top > 0)) return height;
  return height - (Math.min(Math.max(value, 0), top) / top) * height;
}

/**
 * Two bars per bucket (allocated, then used) in a band of width / n: the
 * pair takes 80 % of the band, centred, so neighbouring buckets stay apart,
 * and a bar is at most `maxBar` wide (one bucket is not a wall of colour).
 */
export function barLayout(n: number, width: number, maxBar = 40): { band: number; bar: number; x: (i: number, which: 0 | 1) => number } {
  const band = n > 0 ? width / n : width;
  const bar = Math.min((band * 0.8) / 2, maxBar);
  const inset = (band - 2 * bar) / 2;
  return { band, bar, x: (i, which) => i * band + inset + which * bar };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * A bucket's label on the time axis (UTC): "11-29" for day steps; within a
 * window of a day at most "13:00" ("11-29 00:00" at midnight); over longer
 * windows always the date and the time.
 */
export function bucketLabel(startMs: number, stepMs: number, spanMs: number): string {
  const iso = new Date(startMs).toISOString();
  const day = iso.slice(5, 10);
  const time = iso.slice(11, 16);
  if (stepMs % DAY_MS === 0) return day;
  return spanMs > DAY_MS || time === '00:00' ? `${day} ${time}` : time;
}

/** Which of n buckets get a label: at most `most`, evenly, always the first. */
export function labelled(n: number, most = 8): (i: number) => boolean {
  const every = Math.max(1, Math.ceil(n / most));
  return (i) => i % every === 0;
}

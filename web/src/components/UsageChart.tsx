import type { Bucket } from '../lib/chart';
import { barLayout, bucketLabel, labelled, niceScale, yOf } from '../lib/chart';
import { coverageText, formatGpuHours, formatInstant, perStep } from '../lib/usage';
import { THead } from './Table';

// Drawn by hand as inline SVG rather than with a chart library: one kind of
// chart (two bars per bucket), about 100 lines here and in lib/chart.ts,
// against uPlot's ~50 KB (22 KB gzipped) — a fifth of the bundle's budget —
// for zoom, cursors and canvas rendering the page does not need. SVG also
// takes the page's CSS (no inline style, which the CSP forbids) and scales
// with the text. Its figures are in the table under it (WCAG 1.1.1).
const W = 720;
const H = 230;
const ML = 60;
const MR = 8;
const MT = 10;
const MB = 34;

export function UsageChart({ buckets, stepMs, spanMs, label }: { buckets: Bucket[]; stepMs: number; spanMs: number; label: string }) {
  const past = buckets.filter((b) => !b.future);
  const max = Math.max(0, ...past.map((b) => Math.max(b.allocated, b.used)));
  const { top, ticks } = niceScale(max);
  const pw = W - ML - MR;
  const ph = H - MT - MB;
  const { band, bar, x } = barLayout(buckets.length, pw);
  const show = labelled(buckets.length, 7);
  const sum = (f: (b: Bucket) => number) => past.reduce((s, b) => s + f(b), 0);
  const summary =
    `${label}: bar chart of allocated and used GPU-hours ${perStep(stepMs)}, ${buckets.length} bars. ` +
    `In all ${formatGpuHours(sum((b) => b.allocated))} allocated, ${formatGpuHours(sum((b) => b.used))} used. The figures are in the table below the chart.`;
  return (
    <figure class="chart" data-usage-chart data-bars={buckets.length}>
      <figcaption>
        {label}: GPU-hours {perStep(stepMs)}
        <span class="legend">
          <span class="swatch swatch--allocated" aria-hidden="true" /> Allocated <span class="swatch swatch--used" aria-hidden="true" /> Used
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary} preserveAspectRatio="xMinYMin meet">
        <g transform={`translate(${ML},${MT})`}>
          {ticks.map((t) => (
            <g key={t} class="tick">
              <line x1={0} x2={pw} y1={yOf(t, top, ph)} y2={yOf(t, top, ph)} />
              <text x={-6} y={yOf(t, top, ph)} dy="0.32em" text-anchor="end">
                {formatGpuHours(t)}
              </text>
            </g>
          ))}
          {buckets.map((b, i) =>
            b.future ? null : (
              <g key={b.startMs}>
                <title>{`${formatInstant(b.startMs)}: ${formatGpuHours(b.allocated)} allocated, ${formatGpuHours(b.used)} used GPU-hours`}</title>
                <rect class="bar bar--allocated" x={x(i, 0)} y={yOf(b.allocated, top, ph)} width={bar} height={ph - yOf(b.allocated, top, ph)} />
                <rect class="bar bar--used" x={x(i, 1)} y={yOf(b.used, top, ph)} width={bar} height={ph - yOf(b.used, top, ph)} />
              </g>
            ),
          )}
          <line class="axis" x1={0} x2={pw} y1={ph} y2={ph} />
          {buckets.map((b, i) =>
            show(i) ? (
              <text key={b.startMs} class="x-label" x={i * band + band / 2} y={ph + 18} text-anchor="middle">
                {bucketLabel(b.startMs, stepMs, spanMs)}
              </text>
            ) : null,
          )}
        </g>
      </svg>
      <details>
        <summary>The chart’s figures</summary>
        <table class="list" data-chart-table>
          <caption>GPU-hours {perStep(stepMs)}</caption>
          <THead cols={['From (UTC)', 'Allocated', 'Used', 'Coverage']} />
          <tbody>
            {past.map((b) => (
              <tr key={b.startMs} data-bucket={new Date(b.startMs).toISOString()}>
                <th scope="row">{formatInstant(b.startMs)}</th>
                <td>{formatGpuHours(b.allocated)}</td>
                <td>{formatGpuHours(b.used)}</td>
                <td>{coverageText(b.allocated > 0 ? b.measured / b.allocated : 0, b.allocated)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

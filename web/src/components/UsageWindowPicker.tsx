import { PRESETS, formatInstant, stepWords, windowQuery, type UsageWindow } from '../lib/usage';

/**
 * The report's window: one link per preset (a link, not a select that
 * navigates on change: each window is a URL to share or bookmark, and
 * keyboard users move through it without changing the page by accident),
 * then the window in words.
 */
export function UsageWindowPicker({ path, window: w, resolution }: { path: string; window: UsageWindow; resolution?: string | undefined }) {
  return (
    <div class="window-picker">
      <nav aria-label="Window">
        <ul class="segmented">
          {PRESETS.map((p) => (
            <li key={p.key}>
              <a href={path + windowQuery({ preset: p.key, start: '', end: '', step: '' })} aria-current={w.preset === p.key ? 'true' : undefined} data-window={p.key}>
                {p.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <p class="hint" data-window-text>
        {w.preset === 'custom' ? 'The link’s window: ' : ''}
        {formatInstant(w.startMs)} to {formatInstant(w.endMs)}, in steps of {stepWords(w.stepMs)}
        {resolution ? ` (from septad’s ${resolution} records)` : ''}.{' '}
        <a href={path + windowQuery({ ...w, preset: 'custom' })} data-window-link>
          Link to this exact window
        </a>
      </p>
      {w.invalid ? (
        <p class="note" role="status" data-window-invalid>
          The link’s window was not used: {w.invalid}.
        </p>
      ) : null}
    </div>
  );
}

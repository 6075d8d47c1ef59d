// Formatting of the API's quantities for people. int64 fields arrive as
// strings (protobuf's JSON mapping), int32 as numbers; both are accepted.

export type IntLike = number | string | undefined | null;

export function toInt(v: IntLike): number {
  if (v === undefined || v === null || v === '') return 0;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : 0;
}

function trimZeros(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** 1000 milli-GPU = one GPU-equivalent: 429 → "0.429". */
export function formatGpuMilli(milli: IntLike): string {
  return trimZeros((toInt(milli) / 1000).toFixed(3));
}

export function formatCpuMilli(milli: IntLike): string {
  const m = toInt(milli);
  return m % 1000 === 0 ? String(m / 1000) : trimZeros((m / 1000).toFixed(3));
}

export function formatMiB(mib: IntLike): string {
  const m = toInt(mib);
  if (m >= 1024 * 1024) return `${trimZeros((m / 1024 / 1024).toFixed(2))} TiB`;
  if (m >= 1024) return `${trimZeros((m / 1024).toFixed(2))} GiB`;
  return `${m} MiB`;
}

/** protobuf Duration JSON ("3600s", "0.5s") → seconds; NaN when malformed. */
export function parseProtoDuration(d: string | undefined): number {
  const m = /^(-?\d+(?:\.\d{1,9})?)s$/.exec(d ?? '');
  return m ? Number(m[1]) : NaN;
}

/** Seconds → "1h30m", "15m", "45s", "1d"; for limits such as credential TTLs. */
export function formatSeconds(total: number): string {
  if (!Number.isFinite(total) || total < 0) return '—';
  if (total === 0) return '0s';
  const units: [string, number][] = [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]];
  let rest = Math.round(total);
  let out = '';
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${name}`;
      rest -= n * size;
    }
  }
  return out;
}

/** "2026-11-29T22:00:00Z" → "2026-11-29 22:00 UTC"; '' for unset. */
export function formatTime(rfc3339: string | undefined): string {
  if (!rfc3339) return '';
  const t = new Date(rfc3339);
  if (Number.isNaN(t.getTime())) return rfc3339;
  return `${t.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Whether a time is set, not past, and within `windowMs` of now. */
export function expiresWithin(rfc3339: string | undefined, now: number, windowMs: number): boolean {
  if (!rfc3339) return false;
  const t = Date.parse(rfc3339);
  return Number.isFinite(t) && t > now && t - now <= windowMs;
}

export const DAY_MS = 24 * 3600 * 1000;

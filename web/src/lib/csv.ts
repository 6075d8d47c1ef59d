// CSV of the usage reports, made in the page from what septad returned (pure;
// test/csv.test.ts). RFC 4180: lines end with CRLF (the last one too); a
// field with a comma, a double quote, a CR or an LF is quoted and its quotes
// doubled. The columns and their names are septactl's (`septactl usage -o
// csv`, services/cli/views.cc), numbers at full precision, so a file from
// either reads the same. Names are DNS labels septad validated, so no cell
// can start like a spreadsheet formula (=, +, -, @) except a negative number.

export type Cell = string | number | undefined | null;

export function csvField(value: Cell): string {
  const text = value === undefined || value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(header: string[], rows: Cell[][]): string {
  return [header, ...rows].map((r) => `${r.map(csvField).join(',')}\r\n`).join('');
}

interface Item {
  start?: string;
  end?: string;
  tenant?: string;
  vcluster?: string;
  tier?: string;
  model?: string;
  mig_profile?: string;
  allocated_gpu_hours?: number;
  used_gpu_hours?: number;
  waste_gpu_hours?: number;
  efficiency?: number;
  coverage?: number;
  cost?: number;
}

const DIMENSIONS = ['tenant', 'vcluster', 'tier', 'model', 'mig_profile'] as const;

/**
 * A usage report's items, as `septactl usage -o csv` writes them: start, end,
 * the dimensions some item is grouped by, then the figures. protobuf's JSON
 * omits zeros, so an absent figure is 0; an unmeasured efficiency is "-".
 */
export function usageCsv(report: { items?: Item[]; currency?: string }): string {
  const items = report.items ?? [];
  const dims = DIMENSIONS.filter((d) => items.some((i) => i[d]));
  const header = ['start', 'end', ...dims, 'allocated_gpu_hours', 'used_gpu_hours', 'waste_gpu_hours', 'efficiency', 'coverage', 'cost', 'currency'];
  const rows = items.map((i) => [
    i.start,
    i.end,
    ...dims.map((d) => i[d]),
    i.allocated_gpu_hours ?? 0,
    i.used_gpu_hours ?? 0,
    i.waste_gpu_hours ?? 0,
    i.efficiency ?? '-',
    i.coverage ?? 0,
    i.cost ?? 0,
    report.currency ?? '',
  ]);
  return toCsv(header, rows);
}

interface PoolItem {
  start?: string;
  end?: string;
  model?: string;
  capacity_gpu_hours?: number;
  reserved_gpu_hours?: number;
  unreserved_gpu_hours?: number;
  used_gpu_hours?: number;
}

/** The platform's pool, as `septactl usage -o csv` writes it (model "all" when not grouped by model). */
export function poolCsv(pool: PoolItem[]): string {
  const header = ['start', 'end', 'model', 'capacity_gpu_hours', 'reserved_gpu_hours', 'unreserved_gpu_hours', 'used_gpu_hours'];
  return toCsv(
    header,
    pool.map((p) => [p.start, p.end, p.model || 'all', p.capacity_gpu_hours ?? 0, p.reserved_gpu_hours ?? 0, p.unreserved_gpu_hours ?? 0, p.used_gpu_hours ?? 0]),
  );
}

/** "usage-acme-2026-11-22T14-00Z-2026-11-29T14-00Z.csv": a file name without colons. */
export function csvFileName(what: string, start: string, end: string): string {
  const t = (s: string) => s.replace(/:00Z$/, 'Z').replace(/:/g, '-');
  return `${what}-${t(start)}-${t(end)}.csv`.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** A used/limit bar: <meter> (no inline style), with the figures as text beside it. */
export function QuotaMeter({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  if (limit === null) return <span class="hint">unlimited</span>;
  return <meter aria-label={`${label}: ${used} of ${limit}`} min={0} max={Math.max(limit, used, 1)} value={used} high={limit * 0.8} low={limit * 0.5} optimum={0} />;
}

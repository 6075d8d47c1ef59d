import type { PageProps } from '../../app';
import { getPlatformUsage, listHoarders } from '../../api/queries';
import type { UsageItem, UsagePoolItem } from '../../api/types';
import { usePoll, useTitle } from '../../lib/hooks';
import { useLocation } from '../../lib/router';
import { paths } from '../../lib/routes';
import { fillBuckets } from '../../lib/chart';
import { csvFileName, poolCsv, usageCsv } from '../../lib/csv';
import { download } from '../../lib/download';
import { formatGpuHours, formatShare, windowFromQuery, windowQuery } from '../../lib/usage';
import { ErrorBox } from '../../components/ErrorBox';
import { THead } from '../../components/Table';
import { UsageWindowPicker } from '../../components/UsageWindowPicker';
import { UsageChart } from '../../components/UsageChart';
import { UsageTable } from '../../components/UsageTable';
import { Hoarders } from '../../components/Hoarders';

const REPORT_POLL_MS = 60_000;
const HOARDERS_POLL_MS = 15_000;

function PoolTable({ pool }: { pool: UsagePoolItem[] }) {
  return (
    <table class="list" data-pool>
      <caption>The platform’s GPUs over the window, in GPU-hours</caption>
      <THead cols={['Model', 'Capacity', 'Reserved', 'Unreserved pool', 'Used on the devices', 'Reserved share']} />
      <tbody>
        {pool.map((p) => (
          <tr key={p.model || 'all'} data-pool-row={p.model || 'all'}>
            <th scope="row">{p.model || 'All models'}</th>
            <td data-col="capacity">{formatGpuHours(p.capacity_gpu_hours)}</td>
            <td data-col="reserved">{formatGpuHours(p.reserved_gpu_hours)}</td>
            <td data-col="unreserved">{formatGpuHours(p.unreserved_gpu_hours)}</td>
            <td data-col="used">{formatGpuHours(p.used_gpu_hours)}</td>
            <td data-col="reserved-share">{p.capacity_gpu_hours ? formatShare((p.reserved_gpu_hours ?? 0) / p.capacity_gpu_hours) : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Every tenant's usage over a window and the platform's unreserved pool
 * (capacity no reservation holds: septad's version of OpenCost's __idle__),
 * the tenants' allocated vs used over time, and every tenant's idle GPUs.
 */
export function PlatformUsage(_: PageProps) {
  useTitle('Platform usage');
  const { query } = useLocation();
  const queryKey = query.toString();
  const report = usePoll(
    async () => {
      const w = windowFromQuery(new URLSearchParams(queryKey), Date.now());
      const [series, byTenant] = await Promise.all([getPlatformUsage(w.start, w.end, w.step), getPlatformUsage(w.start, w.end, '', ['tenant'])]);
      return { w, series, byTenant, now: Date.now() };
    },
    [queryKey],
    () => REPORT_POLL_MS,
  );
  const hoarders = usePoll(() => listHoarders(), [], () => HOARDERS_POLL_MS);
  const w = report.data?.w ?? windowFromQuery(new URLSearchParams(queryKey), Date.now());

  let body;
  if (!report.data) {
    body = report.error ? <ErrorBox error={report.error} /> : <p aria-busy="true">Loading…</p>;
  } else {
    const { series, byTenant } = report.data;
    const usage = byTenant.usage ?? {};
    const items = usage.items ?? [];
    const pool = byTenant.pool ?? [];
    const tenantLink = (i: UsageItem) => <a href={paths.usage(i.tenant ?? '') + windowQuery(w)}>{i.tenant}</a>;
    body = (
      <>
        {report.error ? <ErrorBox error={report.error} context="Refresh failed" /> : null}
        {items.length === 0 ? (
          <p data-usage-empty>Nothing recorded in this window: no tenant held GPUs in it, or Septa has not accounted their use yet.</p>
        ) : (
          <UsageChart
            buckets={fillBuckets(series.usage?.items ?? [], w.startMs, w.endMs, w.stepMs, report.data.now)}
            stepMs={w.stepMs}
            spanMs={w.endMs - w.startMs}
            label="All tenants"
          />
        )}
        <section aria-labelledby="pu-tenants-h">
          <h2 id="pu-tenants-h">Per tenant</h2>
          {items.length ? (
            <>
              <UsageTable caption="Per tenant over the window, in GPU-hours" groupCol="Tenant" items={items} total={usage.total} currency={usage.currency} name={tenantLink} rowKey={(i) => i.tenant ?? ''} />
              <p class="actions">
                <button type="button" class="btn" data-csv="tenants" onClick={() => download(csvFileName('usage-tenants', w.start, w.end), usageCsv(usage), 'text/csv')}>
                  Download the tenants as CSV
                </button>
              </p>
            </>
          ) : (
            <p>No tenant held GPUs in this window.</p>
          )}
        </section>
        <section aria-labelledby="pu-pool-h">
          <h2 id="pu-pool-h">Pool</h2>
          <p class="hint">
            Capacity is every GPU of the inventory, an hour per hour present; reserved is what tenants held (their allocated GPU-hours); the unreserved
            pool is the rest. Used is measured on the devices, held or not.
          </p>
          <PoolTable pool={pool} />
          <p class="actions">
            <button type="button" class="btn" data-csv="pool" onClick={() => download(csvFileName('usage-pool', w.start, w.end), poolCsv(pool), 'text/csv')}>
              Download the pool as CSV
            </button>
          </p>
        </section>
      </>
    );
  }
  return (
    <section aria-labelledby="pu-h" data-loaded={report.data ? 'platform-usage' : undefined}>
      <h1 id="pu-h">Platform usage</h1>
      <UsageWindowPicker path={paths.platformUsage} window={w} resolution={report.data?.series.usage?.resolution} />
      {body}
      <section aria-labelledby="pu-idle-h" data-loaded={hoarders.data ? 'hoarders' : undefined}>
        <h2 id="pu-idle-h">Idle GPUs now, every tenant</h2>
        {hoarders.error ? <ErrorBox error={hoarders.error} context="Idle GPUs could not be read" /> : null}
        {hoarders.data ? <Hoarders hoarders={hoarders.data} showTenant={true} /> : hoarders.error ? null : <p aria-busy="true">Loading…</p>}
      </section>
    </section>
  );
}

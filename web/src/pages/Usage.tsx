import type { PageProps } from '../app';
import { api, call } from '../api/client';
import { getTenantUsage, listHoarders, listVClusters } from '../api/queries';
import type { UsageItem, VirtualCluster } from '../api/types';
import { usePoll, useTitle } from '../lib/hooks';
import { quotaRows } from '../lib/quota';
import { paths } from '../lib/routes';
import { useLocation } from '../lib/router';
import { describeCapacity } from '../lib/capacity';
import { describeHeld, describeLimits, pollIntervalMs } from '../lib/vclusters';
import { fillBuckets } from '../lib/chart';
import { csvFileName, usageCsv } from '../lib/csv';
import { download } from '../lib/download';
import { windowFromQuery } from '../lib/usage';
import { ErrorBox } from '../components/ErrorBox';
import { QuotaMeter } from '../components/QuotaMeter';
import { THead } from '../components/Table';
import { UsageWindowPicker } from '../components/UsageWindowPicker';
import { UsageChart } from '../components/UsageChart';
import { UsageTable } from '../components/UsageTable';
import { Hoarders } from '../components/Hoarders';

// Reports change at each scrape of the GPUs (30 s by default) but are read
// at a glance: once a minute, revalidated by ETag. Hoarders and what is
// held now are the live part.
const REPORT_POLL_MS = 60_000;
const HOARDERS_POLL_MS = 15_000;

/**
 * What a tenant holds and uses: over a window (in the URL), allocated vs used
 * GPU-hours per step, per virtual cluster with waste, efficiency, coverage and
 * cost, as CSV too; its virtual clusters idle now past their tier's threshold;
 * and what each virtual cluster holds now against the quota.
 */
export function Usage({ params }: PageProps) {
  const tenant = params.tenant!;
  useTitle(`Usage of ${tenant}`);
  const { query } = useLocation();
  const queryKey = query.toString();

  // The window is computed at each read, so a rolling window moves on.
  const report = usePoll(
    async () => {
      const w = windowFromQuery(new URLSearchParams(queryKey), Date.now());
      // One after the other: septad answers a tenant at most two reports at
      // once (docs/usage.md), so that a second open page still gets its own.
      const series = await getTenantUsage(tenant, w.start, w.end, w.step);
      const byVcluster = await getTenantUsage(tenant, w.start, w.end, '', ['vcluster']);
      return { w, series, byVcluster, now: Date.now() };
    },
    [tenant, queryKey],
    () => REPORT_POLL_MS,
  );
  const hoarders = usePoll(() => listHoarders(tenant), [tenant], () => HOARDERS_POLL_MS);
  const now = usePoll(
    async () => {
      const [vclusters, quota] = await Promise.all([listVClusters(tenant), call(api.GET('/v1/tenants/{tenant}/quota', { params: { path: { tenant } } }))]);
      return { vclusters, quota };
    },
    [tenant],
    (d) => pollIntervalMs(d?.vclusters),
  );

  const w = report.data?.w ?? windowFromQuery(new URLSearchParams(queryKey), Date.now());
  const path = paths.usage(tenant);
  return (
    <section aria-labelledby="use-h" data-loaded={report.data ? 'usage' : undefined}>
      <h1 id="use-h">Usage of {tenant}</h1>
      <p class="lead">
        Allocated GPU-hours are what the virtual clusters held, used or not, and what is billed; used GPU-hours are how busy their GPUs were (the
        share of time the GPU's engines were active), measured from each GPU's exporter. Waste is measured time not used; time no measurement covers
        is shown apart, never as idle.
      </p>
      <UsageWindowPicker path={path} window={w} resolution={report.data?.series.resolution} />
      <UsageReportPart tenant={tenant} data={report.data} error={report.error} vclusters={now.data?.vclusters} />
      <section aria-labelledby="use-idle-h" data-loaded={hoarders.data ? 'hoarders' : undefined}>
        <h2 id="use-idle-h">Idle GPUs now</h2>
        {hoarders.error ? <ErrorBox error={hoarders.error} context="Idle GPUs could not be read" /> : null}
        {hoarders.data ? <Hoarders hoarders={hoarders.data} showTenant={false} /> : hoarders.error ? null : <p aria-busy="true">Loading…</p>}
      </section>
      <AllocatedNow tenant={tenant} data={now.data} error={now.error} />
    </section>
  );
}

interface ReportData {
  w: ReturnType<typeof windowFromQuery>;
  series: Awaited<ReturnType<typeof getTenantUsage>>;
  byVcluster: Awaited<ReturnType<typeof getTenantUsage>>;
  now: number;
}

function UsageReportPart({ tenant, data, error, vclusters }: { tenant: string; data: ReportData | undefined; error: unknown; vclusters: VirtualCluster[] | undefined }) {
  if (!data) return error ? <ErrorBox error={error} /> : <p aria-busy="true">Loading…</p>;
  const { w, series, byVcluster } = data;
  const items = byVcluster.items ?? [];
  const stale = error ? <ErrorBox error={error} context="Refresh failed" /> : null;
  if (items.length === 0 && !(byVcluster.total?.allocated_gpu_hours ?? 0)) {
    return (
      <>
        {stale}
        <p data-usage-empty>
          Nothing recorded in this window: no virtual cluster of {tenant} held GPUs in it, or Septa has not accounted their use yet (it does at each
          reading of the GPUs' exporters).
        </p>
      </>
    );
  }
  const existing = new Set((vclusters ?? []).map((v) => v.name));
  const currency = byVcluster.currency;
  const name = (i: UsageItem) => (existing.has(i.vcluster) ? <a href={paths.vcluster(tenant, i.vcluster!)}>{i.vcluster}</a> : i.vcluster);
  const costless = (byVcluster.total?.cost ?? 0) === 0 && (byVcluster.total?.allocated_gpu_hours ?? 0) > 0;
  return (
    <>
      {stale}
      <UsageChart buckets={fillBuckets(series.items ?? [], w.startMs, w.endMs, w.stepMs, data.now)} stepMs={w.stepMs} spanMs={w.endMs - w.startMs} label={`Usage of ${tenant}`} />
      <UsageTable caption="Per virtual cluster over the window, in GPU-hours" groupCol="Virtual cluster" items={items} total={byVcluster.total} currency={currency} name={name} rowKey={(i) => i.vcluster ?? ''} />
      {costless ? <p class="hint">No rate is set for these GPUs, so their cost is 0 (an admin sets rates per model and tier).</p> : null}
      <p class="actions">
        <button type="button" class="btn" data-csv="vclusters" onClick={() => download(csvFileName(`usage-${tenant}`, w.start, w.end), usageCsv(byVcluster), 'text/csv')}>
          Download the table as CSV
        </button>
      </p>
    </>
  );
}

/** What each virtual cluster holds now, and the tenant's GPU-equivalents against its quota. */
function AllocatedNow({ tenant, data, error }: { tenant: string; data: { vclusters: VirtualCluster[]; quota: Parameters<typeof quotaRows>[0] } | undefined; error: unknown }) {
  let body;
  if (!data) {
    body = error ? <ErrorBox error={error} /> : <p aria-busy="true">Loading…</p>;
  } else {
    const { vclusters, quota } = data;
    const gpu = quotaRows(quota).find((r) => r.key === 'gpu_milli')!;
    body = (
      <>
        {error ? <ErrorBox error={error} context="Refresh failed" /> : null}
        <p data-usage-total>
          Allocated now: {gpu.format(gpu.used)} GPU-equivalents{gpu.limit === null ? ' (no limit)' : ` of ${gpu.format(gpu.limit)}`}{' '}
          <QuotaMeter label="GPU-equivalents" used={gpu.used} limit={gpu.limit} /> in {vclusters.length} virtual cluster{vclusters.length === 1 ? '' : 's'}.
        </p>
        {vclusters.length === 0 ? (
          <p>No virtual clusters: nothing is allocated.</p>
        ) : (
          <table class="list">
            <caption>Allocated capacity per virtual cluster</caption>
            <THead cols={['Virtual cluster', 'State', 'Asked for', 'Holds now', 'Workload limits']} />
            <tbody>
              {vclusters.map((vc) => (
                <tr key={vc.name} data-usage={vc.name}>
                  <th scope="row"><a href={paths.vcluster(tenant, vc.name!)}>{vc.name}</a></th>
                  <td>{vc.state}</td>
                  <td>{describeCapacity(vc.capacity)}</td>
                  <td data-held>{describeHeld(vc.reservation)}</td>
                  <td>{describeLimits(vc.quota)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </>
    );
  }
  return (
    <section aria-labelledby="use-now-h" data-loaded={data ? 'usage-now' : undefined}>
      <h2 id="use-now-h">Allocated now</h2>
      {body}
    </section>
  );
}

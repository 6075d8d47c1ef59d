import type { PageProps } from '../app';
import { api, call } from '../api/client';
import { listVClusters } from '../api/queries';
import { usePoll, useTitle } from '../lib/hooks';
import { quotaRows } from '../lib/quota';
import { paths } from '../lib/routes';
import { describeCapacity } from '../lib/capacity';
import { describeHeld, describeLimits, pollIntervalMs } from '../lib/vclusters';
import { ErrorBox } from '../components/ErrorBox';
import { QuotaMeter } from '../components/QuotaMeter';
import { THead } from '../components/Table';
import { Loading } from '../components/Loading';

/**
 * What a tenant uses. Septa records no use over time yet, so there is no chart
 * and no cost here (inventing figures would be worse than none); the page shows
 * what is allocated now: each virtual cluster's reservation, and the tenant's
 * GPU-equivalents as septad counts them against the quota.
 */
export function Usage({ params }: PageProps) {
  const tenant = params.tenant!;
  useTitle(`Usage of ${tenant}`);
  const data = usePoll(
    async () => {
      const [vclusters, quota] = await Promise.all([listVClusters(tenant), call(api.GET('/v1/tenants/{tenant}/quota', { params: { path: { tenant } } }))]);
      return { vclusters, quota };
    },
    [tenant],
    (d) => pollIntervalMs(d?.vclusters),
  );
  const intro = (
    <p class="lead">
      Usage and cost charts arrive with the usage feature: Septa does not record use over time yet, so there is nothing to chart or to bill. What is known now is
      what each virtual cluster holds.
    </p>
  );
  if (!data.data) {
    return (
      <Loading id="use-h" title={`Usage of ${tenant}`} error={data.error}>
        {intro}
      </Loading>
    );
  }
  const { vclusters, quota } = data.data;
  const gpu = quotaRows(quota).find((r) => r.key === 'gpu_milli')!;
  return (
    <section aria-labelledby="use-h" data-loaded="usage">
      <h1 id="use-h">Usage of {tenant}</h1>
      {intro}
      {data.error ? <ErrorBox error={data.error} context="Refresh failed" /> : null}
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
    </section>
  );
}

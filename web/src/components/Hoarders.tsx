import type { Hoarder } from '../api/types';
import { formatSeconds, toInt } from '../lib/quantity';
import { paths } from '../lib/routes';
import { THead } from './Table';

/**
 * Virtual clusters all of whose GPUs have idled (every 30 s window under 1 %
 * activity) for at least their tier's threshold, as septad reports them now.
 */
export function Hoarders({ hoarders, showTenant }: { hoarders: Hoarder[]; showTenant: boolean }) {
  if (hoarders.length === 0) {
    return <p data-hoarders-none>None now: no virtual cluster has left all its GPUs idle for longer than its tier allows.</p>;
  }
  return (
    <table class="list" data-hoarders>
      <caption>Virtual clusters whose GPUs are all idle</caption>
      <THead cols={[...(showTenant ? ['Tenant'] : []), 'Virtual cluster', 'Idle for', 'Threshold of its tier', 'GPU memory']} />
      <tbody>
        {hoarders.map((h) => (
          <tr key={`${h.tenant}/${h.vcluster}`} data-hoarder={`${h.tenant}/${h.vcluster}`}>
            {showTenant ? <td>{h.tenant}</td> : null}
            <th scope="row">
              <a href={paths.vcluster(h.tenant ?? '', h.vcluster ?? '')}>{h.vcluster}</a>
            </th>
            <td data-col="idle">{formatSeconds(toInt(h.idle_seconds))}</td>
            <td data-col="threshold">
              {formatSeconds(toInt(h.threshold_seconds))} ({h.tier})
            </td>
            <td data-col="memory">{h.holding_memory ? 'Held: more than 1 GiB in use while idle' : 'Not held'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

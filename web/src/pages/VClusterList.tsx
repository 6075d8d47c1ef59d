import { Component } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { markOnce } from '../lib/perf';
import type { PageProps } from '../app';
import type { VirtualCluster } from '../api/types';
import { listVClusters } from '../api/queries';
import { usePoll, useTitle } from '../lib/hooks';
import { navigate, useLocation } from '../lib/router';
import { paths } from '../lib/routes';
import { STATES } from '../lib/quota';
import { describeCapacity } from '../lib/capacity';
import { conditionSummary, filterVClusters, pollIntervalMs } from '../lib/vclusters';
import { formatTime } from '../lib/quantity';
import { mayWrite } from '../lib/tenancy';
import { ErrorBox } from '../components/ErrorBox';
import { THead } from '../components/Table';

interface RowProps {
  tenant: string;
  vc: VirtualCluster;
}

/** A row re-renders only when its virtual cluster's etag changes: polls of 1,000 rows stay cheap. */
class Row extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps) {
    return next.vc.etag !== this.props.vc.etag || next.tenant !== this.props.tenant;
  }
  override render({ tenant, vc }: RowProps) {
    return (
      <tr data-vcluster={vc.name}>
        <th scope="row">
          <a href={paths.vcluster(tenant, vc.name!)}>{vc.name}</a>
          {vc.display_name ? <span class="hint display-name"> {vc.display_name}</span> : null}
        </th>
        <td><span class={`state state--${(vc.state ?? '').toLowerCase()}`} data-state={vc.state}>{vc.state}</span></td>
        <td>{conditionSummary(vc)}</td>
        <td>{describeCapacity(vc.capacity)}</td>
        <td>{formatTime(vc.create_time)}</td>
      </tr>
    );
  }
}

export function VClusterList({ params, session }: PageProps) {
  const tenant = params.tenant!;
  useTitle(`Virtual clusters of ${tenant}`);
  const { query } = useLocation();
  const state = query.get('state') ?? '';
  const [text, setText] = useState('');
  const list = usePoll(
    async () => {
      const vcs = await listVClusters(tenant);
      markOnce('septa:vclusters-fetched');
      return vcs;
    },
    [tenant],
    pollIntervalMs,
  );
  useEffect(() => {
    if (list.data) markOnce('septa:vclusters-rendered');
  }, [list.data]);
  const writer = mayWrite(session.role);

  const setState = (s: string) => navigate(`${paths.vclusters(tenant)}${s ? `?state=${encodeURIComponent(s)}` : ''}`, { replace: true });
  const shown = list.data ? filterVClusters(list.data, text, state) : [];

  return (
    <section aria-labelledby="vcl-h">
      <h1 id="vcl-h">Virtual clusters of {tenant}</h1>
      {writer ? (
        <p>
          <a class="btn btn--primary" href={paths.newVcluster(tenant)}>New virtual cluster</a>
        </p>
      ) : null}
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="vcl-filter">Filter by name</label>
          <input id="vcl-filter" type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="vcl-state">State</label>
          <select id="vcl-state" value={state} onChange={(e) => setState((e.target as HTMLSelectElement).value)}>
            <option value="">Any</option>
            {STATES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </div>
      </form>
      {list.error ? <ErrorBox error={list.error} /> : null}
      {list.data ? (
        <>
          <p role="status" class="hint" data-loaded="vclusters" data-count={list.data.length}>
            Showing {shown.length} of {list.data.length}. Updated by polling every {pollIntervalMs(list.data) / 1000} s.
          </p>
          <table class="list">
            <THead cols={['Name', 'State', 'Conditions', 'Capacity', 'Created']} />
            <tbody>
              {shown.map((vc) => <Row key={vc.name} tenant={tenant} vc={vc} />)}
            </tbody>
          </table>
        </>
      ) : list.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </section>
  );
}
